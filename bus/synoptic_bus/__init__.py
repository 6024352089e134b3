"""Synoptic bus helpers: NATS connection, the JetStream last-value store, the CLI,
and test fixtures that start a real nats-server. The payloads and subjects come from
:mod:`synoptic_schemas`; this package adds the I/O."""

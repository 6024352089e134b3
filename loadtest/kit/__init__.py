"""The load-test orchestrator: starts what is missing (NATS, sources, gateways),
runs a k6 scenario bounded in time, samples server CPU/RSS and writes the report.

Run it as ``python loadtest/run.py`` (``make loadtest``). It talks to adapters and
gateways only as processes; it imports ``synoptic_bus`` and ``synoptic_schemas``.
"""

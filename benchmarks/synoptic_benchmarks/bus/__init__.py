"""Benchmarks of the bus: the last-value store, the adapters' publisher, and the
subscriber process other benchmarks count with."""

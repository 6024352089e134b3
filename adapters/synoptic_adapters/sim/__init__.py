"""Simulators for the demo, tests and benchmarks."""

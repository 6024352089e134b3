"""Benchmarks of the Tango adapter."""

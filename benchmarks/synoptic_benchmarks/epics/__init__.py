"""Benchmarks of the EPICS Channel Access adapter."""

"""Benchmarks of the WebSocket gateway: fan-out and screen open."""

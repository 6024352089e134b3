"""``make bench-faults``: what a facility's weekly faults cost (issue: stopping on
SIGTERM, servers restarting, Tango cold and warm starts, a hanging host)."""

"""Synoptic's benchmarks: scripts that start real parts (nats-server, soft IOC,
Tango device servers, gateways, the peers' servers) and print their results as
JSON. One subpackage per component; nothing in the product packages imports this.
"""

"""History benchmark: bus history read, reduction, trend opens, live latency under a storm."""

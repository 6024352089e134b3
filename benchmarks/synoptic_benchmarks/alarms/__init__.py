"""The alarm benchmark (``make bench-alarms``): a workload on the bus, the alarm
service, and the alarm page in Chromium."""

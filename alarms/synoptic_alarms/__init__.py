"""The alarm service (``synoptic alarms``): what is in alarm now, since when, and
who acknowledged it, for the channels of the alarm tree (ADR 0030)."""

"""EPICS PV Access (p4p): the only package that imports p4p."""

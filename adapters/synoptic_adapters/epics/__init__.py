"""EPICS Channel Access: the only package that imports aioca."""

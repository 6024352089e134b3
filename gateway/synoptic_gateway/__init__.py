"""Synoptic package."""

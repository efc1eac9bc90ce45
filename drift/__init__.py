"""Drift: objects on the spokes whose live state differs from what the stack applied."""

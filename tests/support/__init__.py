"""Shared helpers for the lab and end-to-end tests."""

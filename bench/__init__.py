"""Benchmarks of knative-fleet on its own local lab (`python -m bench`)."""

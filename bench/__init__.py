"""knative-fleet's benchmark on labs of its own, in sections: `python -m bench [--section
NAME ...]` (docs/performance.md, "The benchmark")."""

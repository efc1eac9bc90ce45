"""Fleet configuration, release manifests and the per-spoke Pulumi component."""

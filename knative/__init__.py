"""The Knative side, free of Pulumi: release files, rendering, the spec transforms
and the per-spoke install plan."""

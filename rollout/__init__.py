"""The order in which a fleet's spokes change: waves, batches and their health."""

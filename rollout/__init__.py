"""The order in which a fleet's spokes change: waves and their batches."""

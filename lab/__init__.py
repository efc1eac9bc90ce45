"""The local fleet lab: a hub and N spokes as kwok binary-runtime clusters."""

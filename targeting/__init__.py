"""Which spokes a fleet stack manages: explicit entries and label-selected groups."""

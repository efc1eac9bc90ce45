"""A review report of a fleet's `pulumi preview` that a person can read in a PR.

`pulumi preview` prints every object of every spoke; this package turns the engine's
`--json` document into what a reviewer has to decide on: which spokes change, from
which Knative version to which, what is deleted or replaced, which spokes are
unreachable, and the field-level diff of the objects that change (docs/review.md).
"""

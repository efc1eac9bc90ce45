"""One owner per spoke: which stack manages an install, and the rule every reader of
that applies (the planner, the owner guard's delete, hand-over, the runner's overlap
check, the offline review). Pulumi-free: the identity comes in from the program's
edge, records and holds are read and written with the Kubernetes client.

    identity  the stack's owner identity: a stable id that travels with its state, and
              `organization/project/stack@backend` beside it for people
    records   what an install's anchors record, and the one rule: whose it is
    hold      a run's hold on a spoke (a Lease): taking an unowned spoke is a
              compare-and-swap on the API server, and a hold expires with its process
    refusals  the sentences a user reads when a spoke is not this stack's to change

The error tree, a branch of the product's (core.errors, where BackendUnknown of
`identity` is drawn too):

    OwnershipError             a spoke this stack may not change; `str()` names the
    ├── OwnedByAnotherStack    spoke, the reason and the fix
    ├── HeldByAnotherRun
    └── OwnerUnknown           the record could not be read (fail closed)
"""

"""The operators' tools around the fleet's stacks: the RBAC a stack's identities need
(`python -m operations rights`) and moving a spoke between stacks
(`python -m operations hand-over`). The runner calls them as a library."""

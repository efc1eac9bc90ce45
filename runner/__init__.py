"""The fleet runner: many knative-fleet stacks ("shards") run side by side, ring after
ring, through Pulumi's Automation API, and one view of the whole fleet.

A stack holds at most about 20 spokes (docs/performance.md, "How many spokes one stack should
hold"); a bigger fleet is split into stacks, each with a rollout ring
(`knative-fleet:ring`). `python -m runner up --stacks 'prod-*'` runs ring 1's stacks
at once (at most `--parallel`), then ring 2's only if every stack of ring 1 succeeded.
`python -m runner status` reads every stack's outputs into one table. See
docs/runner.md.

    selection   which stacks: name pattern, ring, `--shard i/n`
    stack_claims what each stack of the pattern selects (its file, the hub)
    overlap     no spoke in two stacks: the shared spokes and the refusal
    plan        rings in order; when a failed ring stops the rollout
    worker      one stack, one operation, in its own process (Automation API)
    execution   a ring's stacks in parallel processes, at most N at once
    progress    engine events -> one line per stack (step, objects, elapsed)
    results     what one stack's run gave, shared by all of the above
    summary     the rollout's outcome as text and JSON
    status      the fleet-wide view from the stacks' outputs
"""

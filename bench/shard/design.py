"""What the shard section measures, fixed in one place: the shard size docs/runner.md
recommends (one stack holds at most about 20 spokes, with `PULUMI_SKIP_CHECKPOINTS`),
the settings it runs with, and the operations timed on it."""

from __future__ import annotations

SPOKES = 20  # docs/runner.md: one stack should hold at most about 20 spokes
RUNS = 1  # each figure the median of this many runs unless --runs says otherwise
STACK = "shard"
# Pulumi's default checkpoints rewrite the whole state before and after every step, so
# an install or destroy grows with the square of the spokes: at 20 spokes each would
# take about an hour here (2 spokes, the machine shared: 88 s and 85 s). docs/runner.md
# recommends 20 spokes a stack with the README's opt-in, `PULUMI_SKIP_CHECKPOINTS=true`,
# and at most 5 without it: install and destroy run with it, the preview (which writes
# no checkpoint) and Pulumi's log as installed.
COMMAND_TIMEOUT_S = 2 * 3600.0
OPERATIONS = ("install", "preview", "destroy")
# The process kinds whose CPU and peak memory the tables show (bench/sampling.py).
KINDS = ("engine", "language_host", "program", "provider")
# The state's figures (bytes), each also per spoke: `pulumi stack export` as written,
# the same JSON without whitespace, and the checkpoint file in the file backend.
STATE = ("state_bytes", "state_compact_bytes", "state_checkpoint_bytes")
# The program under mocks at the stack's size (bench/program.py), in a fresh process.
PROGRAM = ("ms", "plan_ms", "resources", "peak_rss_bytes")
ENGINE_ENV = ("install and destroy with the README's opt-in `PULUMI_SKIP_CHECKPOINTS=true` "
              "(the setting docs/runner.md gives stacks of more than 5 spokes), the "
              "preview without it; `PULUMI_PARALLEL_DIFF` unset and a Pulumi home whose "
              "`logs` is a directory the CLI writes its log into (Pulumi as installed)")

"""The knative-fleet side: the product's own stack on the bench lab, every pulumi command
timed through the runner, and what its state is made of."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from bench.commands import BenchError, Runner, Timed
from bench.metrics import Samples, StateBreakdown
from lab.fleet import FleetStack, entry
from lab.handle import Lab


def bench_entry(spoke: str, config: dict | None = None) -> dict:
    """Serving (Kourier) + Eventing 1.23, CRDs deleted on destroy so that every run
    starts on a fresh spoke and destroy removes what `kubectl delete` removes."""
    e = entry(spoke)
    for component in ("serving", "eventing"):
        e[component]["deleteCrdsOnDestroy"] = True
    if config:
        e["serving"]["config"] = config
    return e


def json_size(value: Any) -> int:
    """Bytes of `value` as compact JSON (0 for None)."""
    return len(json.dumps(value, separators=(",", ":")).encode()) if value is not None else 0


def state_breakdown(export: dict) -> StateBreakdown:
    """What the bytes of a `pulumi stack export` are: inputs, outputs, managedFields,
    per kind, and the largest resources."""
    resources = export.get("deployment", {}).get("resources") or []
    kube = [r for r in resources if r.get("type", "").startswith("kubernetes:")]
    by_kind: dict[str, list[int]] = defaultdict(list)
    managed = 0
    for r in kube:
        by_kind[r["type"].rpartition(":")[2]].append(json_size(r))
        managed += json_size(
            ((r.get("outputs") or {}).get("metadata") or {}).get("managedFields"))
    return StateBreakdown(
        objects=len(kube),
        inputs_bytes=sum(json_size(r.get("inputs")) for r in kube),
        outputs_bytes=sum(json_size(r.get("outputs")) for r in kube),
        managed_fields_bytes=managed,
        by_kind=sorted(((k, len(v), sum(v)) for k, v in by_kind.items()),
                       key=lambda row: -row[2])[:8],
        largest=sorted(((r["urn"].rsplit("::", 1)[-1], json_size(r)) for r in kube),
                       key=lambda row: -row[1])[:5],
    )


class BenchStack(FleetStack):
    """A throwaway `t-bench-*` stack (its config file is ignored by git) in the bench
    lab's own file backend, timed command by command."""

    def __init__(self, lab: Lab, name: str, runner: Runner, extra_args: list[str],
                 extra_env: dict[str, str]) -> None:
        super().__init__(lab, name, lab.dir.state)
        # `--event-log` exists only with the CLI's debug commands on.
        self.env.update({"PULUMI_DEBUG_COMMANDS": "true", **extra_env})
        self.runner = runner
        self.extra_args = extra_args
        self.work = lab.dir.root / "work"
        self.state_dir = lab.dir.state

    def pulumi(self, *args: str, sample_rss: bool = False,
               event_log: str | None = None) -> Timed:
        """`pulumi ARGS` on this stack; `event_log` names a file in the work directory
        that the engine's event log goes to, followed while it runs."""
        extra = list(self.extra_args)
        path = self.work / event_log if event_log else None
        if path:
            extra += ["--event-log", str(path)]
        return self.runner.run(
            ["pulumi", *args, *extra, "--stack", self.stack, "--non-interactive"], self.env,
            sample_rss=sample_rss, event_log=path)

    def must(self, what: str, *args: str, sample_rss: bool = False,
             event_log: str | None = None) -> Timed:
        res = self.pulumi(*args, sample_rss=sample_rss, event_log=event_log)
        if not res.ok:
            raise res.fail(what)
        return res

    def install(self, event_log: str | None = None) -> Timed:
        return self.must("pulumi up", "up", "--yes", "--skip-preview", sample_rss=True,
                         event_log=event_log)

    def noop_preview(self, event_log: str | None = None) -> tuple[Timed, bool]:
        """`pulumi preview --diff --expect-no-changes`; (timing, whether it was a no-op)."""
        res = self.pulumi("preview", "--diff", "--expect-no-changes", event_log=event_log)
        if res.ok:
            return res, True
        if "no changes were expected" in res.stdout + res.stderr:
            return res, False
        raise res.fail("pulumi preview")

    def destroy(self, event_log: str | None = None) -> Timed:  # type: ignore[override]
        return self.must("pulumi destroy", "destroy", "--yes", "--skip-preview",
                         event_log=event_log)

    def export(self) -> tuple[int, dict]:  # type: ignore[override]
        """(bytes of `pulumi stack export`, the export)."""
        res = self.runner.run(
            ["pulumi", "stack", "export", "--stack", self.stack, "--non-interactive"],
            self.env)
        if not res.ok:
            raise res.fail("pulumi stack export")
        return len(res.stdout.encode()), json.loads(res.stdout)

    def checkpoint_bytes(self) -> int | None:
        """Size of the stack's checkpoint file in the file backend, as stored."""
        found = sorted((self.state_dir / ".pulumi" / "stacks").rglob(f"{self.stack}.json*"))
        found = [f for f in found if not f.name.endswith(".bak")]
        return found[0].stat().st_size if found else None

    def measure_state(self, samples: Samples, spokes: int) -> None:
        """Export bytes, the same JSON without whitespace, and the checkpoint file."""
        size, export = self.export()
        samples.add(f"state_bytes_{spokes}", size)
        samples.add(f"state_compact_bytes_{spokes}", json_size(export))
        checkpoint = self.checkpoint_bytes()
        if checkpoint is not None:
            samples.add(f"state_checkpoint_bytes_{spokes}", checkpoint)
        samples.notes.state.setdefault(spokes, state_breakdown(export))

    def spokes_ready(self, names: list[str]) -> None:
        res = self.runner.run(["pulumi", "stack", "output", "--json", "spokes", "--stack",
                               self.stack, "--non-interactive"], self.env, record=False)
        if not res.ok:
            raise res.fail("pulumi stack output")
        out = json.loads(res.stdout)
        not_ready = [n for n in names if not (out.get(n) or {}).get("ready")]
        if not_ready:
            raise BenchError(f"spokes not ready after pulumi up: {', '.join(not_ready)}")

    def drop(self) -> None:
        """Forgets the stack and deletes its config file (best effort)."""
        try:
            self.runner.run(["pulumi", "stack", "rm", "--yes", "--force", "--stack",
                             self.stack, "--non-interactive"], self.env, record=False,
                            timeout=120)
        finally:
            self.cleanup()

"""The breakdown section's runs, on a hub and 2 spokes: knative-fleet installs on
spoke-1 and kubectl applies the same objects on spoke-2, each spoke's API requests
counted from its own metrics and the program profiled (`KNATIVE_FLEET_PROFILE`); a no-op
`pulumi preview` with the engine's and the program's CPU profiles against `kubectl
diff`, and one with the engine's gRPC log; then the program under mocks and cProfile."""

from __future__ import annotations

import json
import os
import pstats
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.breakdown import engine_profile, grpc_calls, program_profile
from bench.breakdown.requests import Requests
from bench.commands import BenchError, Runner, Timed
from bench.fleet.design import FLEET_SPOKE, KUBECTL_SPOKE
from bench.kubectl import render_baseline
from bench.log import log
from bench.own_lab import BenchStack, bench_entry
from bench.sampling import TOTAL
from bench.section import Run
from config.fleet import parse_fleet_config
from core.profiling import PROFILE_ENV
from lab.paths import RELEASES

SPOKES = 2
PROGRAM_SPOKES = 10
PROFILE_FLAG = "--program-profile"
GRPC_LOG_ENV = "PULUMI_DEBUG_GRPC"


def figures(res: Timed) -> dict[str, Any]:
    """Wall seconds and the process tree's CPU seconds by kind, of one sampled command."""
    return {"s": res.seconds, "cpu_s": res.cpu_s.get(TOTAL, 0.0),
            "cpu_by_kind_s": {k: v for k, v in res.cpu_s.items() if k != TOTAL}}


def preview_steps(res: Timed) -> int:
    """How many resource steps a `pulumi preview --json` showed."""
    try:
        doc, _ = json.JSONDecoder().raw_decode(res.stdout[res.stdout.index("{"):])
    except ValueError as exc:
        raise res.fail("pulumi preview --json") from exc
    return len(doc.get("steps", []))


def _requests(counts: Counter[str]) -> dict[str, int]:
    return dict(counts.most_common())


def program_profile_path(runner: Runner, name: str) -> Path:
    return runner.lab_root / "work" / f"program-{name}.prof"


def spoke_side(run: Run, out: dict[str, Any]) -> Path:
    """Install and no-op review, knative-fleet on FLEET_SPOKE and kubectl on
    KUBECTL_SPOKE, with the requests each spoke received; returns the engine profile."""
    bench, runner = run.bench, run.bench.runner
    stack = run.up(SPOKES, "one")
    lab = bench.lab
    stack.configure([bench_entry(FLEET_SPOKE)])
    log(f"first-install preview on {FLEET_SPOKE}")
    out["fleet_first_preview_steps"] = preview_steps(
        stack.must("pulumi preview --json", "preview", "--json"))
    log(f"pulumi up on {FLEET_SPOKE}")
    cpu = bench.control_plane_cpu([FLEET_SPOKE])
    stack.env[PROFILE_ENV] = str(program_profile_path(runner, "install"))
    with Requests(lab.spoke(FLEET_SPOKE).api()) as requests:
        res = stack.install()
    out["fleet_install"] = figures(res)
    out["fleet_install_spoke_cpu_s"] = cpu.seconds()
    out["fleet_install_requests"] = _requests(requests.counts)
    stack.spokes_ready([FLEET_SPOKE])
    log("pulumi preview (no-op) with the engine's CPU profile")
    prefix = runner.lab_root / "work" / "engine"
    stack.env[PROFILE_ENV] = str(program_profile_path(runner, "preview"))
    with Requests(lab.spoke(FLEET_SPOKE).api()) as requests:
        res = stack.must("pulumi preview", "preview", "--diff", "--expect-no-changes",
                         "--profiling", str(prefix), sample_rss=True)
    del stack.env[PROFILE_ENV]
    out["fleet_preview"] = figures(res)
    out["fleet_preview_requests"] = _requests(requests.counts)
    out["fleet_preview_grpc"] = preview_calls(runner, stack)

    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                              "fleet": [bench_entry(KUBECTL_SPOKE)]})
    base = render_baseline(cfg.fleet[0], cfg.release_base)
    kubectl = bench.kubectl(KUBECTL_SPOKE)
    log(f"kubectl apply + wait on {KUBECTL_SPOKE}")
    cpu = bench.control_plane_cpu([KUBECTL_SPOKE])
    with Requests(lab.spoke(KUBECTL_SPOKE).api()) as requests:
        seconds, _, applied = kubectl.install(base)
    out["kubectl_install_s"] = seconds
    out["kubectl_install_spoke_cpu_s"] = cpu.seconds()
    out["kubectl_install_requests"] = _requests(requests.counts)
    log("kubectl diff --server-side")
    with Requests(lab.spoke(KUBECTL_SPOKE).api()) as requests:
        res = kubectl.diff(applied)
    out["kubectl_diff_s"] = res.seconds
    out["kubectl_diff_requests"] = _requests(requests.counts)
    out["objects"] = base.count
    log("pulumi destroy, kubectl delete")
    out["fleet_destroy"] = figures(stack.must(
        "pulumi destroy", "destroy", "--yes", "--skip-preview", sample_rss=True))
    kubectl.delete(applied)
    bench.assert_fresh([KUBECTL_SPOKE, FLEET_SPOKE])
    found = sorted(prefix.parent.glob(prefix.name + ".*.cpu"))
    if not found:
        raise BenchError(f"pulumi wrote no CPU profile at {prefix}.<pid>.cpu")
    return found[-1]


def preview_calls(runner: Runner, stack: BenchStack) -> dict[str, Any]:
    """A further no-op preview with the engine's gRPC log: per kind, what the provider's
    Check and Diff calls took, and when the run reached each stage. The log holds every
    request in full, so it is deleted once read."""
    log("pulumi preview (no-op) with the engine's gRPC log")
    path = runner.lab_root / "work" / "preview-grpc.json"
    stack.env[GRPC_LOG_ENV] = str(path)
    try:
        res = stack.must("pulumi preview", "preview", "--diff", "--expect-no-changes")
        calls = grpc_calls.read_file(path)
    finally:
        del stack.env[GRPC_LOG_ENV]
        path.unlink(missing_ok=True)
    return {"s": res.seconds, "per_kind": grpc_calls.per_kind(calls),
            **grpc_calls.milestones(calls)}


def engine_side(runner: Runner, profile: Path, out: dict[str, Any]) -> None:
    go = shutil.which("go")
    if go is None:
        raise BenchError("`go` is not on PATH: the engine profile is read with go tool pprof")
    assert runner.toolchain is not None
    rows = engine_profile.read_profile(go, runner.toolchain / "pulumi", profile)
    out["engine_cpu_s"] = sum(s for _, s in rows)
    out["engine_packages"] = dict(engine_profile.by_package(rows).most_common(15))
    out["engine_functions"] = dict(sorted(rows, key=lambda r: -r[1])[:15])


def _profile(path: Path) -> dict[str, Any]:
    stats = pstats.Stats(str(path))
    return {"cpu_s": stats.total_tt,  # type: ignore[attr-defined]
            "areas": dict(program_profile.areas(stats).most_common()),
            "functions": [list(r) for r in program_profile.top_functions(stats)]}


def program_side(runner: Runner, out: dict[str, Any]) -> None:
    """The real program's profiles of the install and the preview (KNATIVE_FLEET_PROFILE),
    and the program under mocks for PROGRAM_SPOKES spokes."""
    mocks = program_profile_path(runner, "mocks")
    log(f"program under mocks and cProfile, {PROGRAM_SPOKES} spokes")
    res = runner.run([sys.executable, "-m", "bench", PROFILE_FLAG, str(PROGRAM_SPOKES),
                      str(mocks)], dict(os.environ))
    if not res.ok:
        raise res.fail("program profile")
    out["program_spokes"] = PROGRAM_SPOKES
    out["program_profiles"] = {
        "install": _profile(program_profile_path(runner, "install")),
        "preview": _profile(program_profile_path(runner, "preview")),
        "mocks": _profile(mocks),
    }


def measure(run: Run) -> None:
    """The spokes, then the engine's profile, then the program's; every figure a fact."""
    profile = spoke_side(run, run.facts)
    engine_side(run.bench.runner, profile, run.facts)
    program_side(run.bench.runner, run.facts)

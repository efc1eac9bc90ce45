"""`python -m bench.breakdown`: where one install's and one no-op preview's time goes.

On a lab of its own (`.lab-bench-breakdown/`, a hub and 2 spokes): knative-fleet
installs on spoke-1 and kubectl applies the same objects on spoke-2 (bench.kubectl),
each spoke's API requests counted from its own metrics, the program profiled
(`KNATIVE_FLEET_PROFILE`); a no-op `pulumi preview` with the engine's and the program's
CPU profiles against `kubectl diff`; then the program under mocks and cProfile.
Writes `bench/breakdown-results.json` and its section of BENCHMARKS.md, and
tears its lab down, on failure too. About 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import signal
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from bench.breakdown import configgroup, engine_profile, grpc_calls, program_profile, report
from bench.breakdown.requests import Requests
from bench.commands import BenchError, Runner
from bench.design import BENCHMARKS_MD, FLEET_SPOKE, KUBECTL_SPOKE
from bench.fleet_stack import BenchStack, bench_entry
from bench.fresh_lab import fresh_lab, on_own_lab
from bench.kubectl import Kubectl, render_baseline
from bench.log import log
from bench.machine import load_average, machine_facts
from bench.scenarios import Options, Session, control_plane_cpu
from config.fleet import parse_fleet_config
from core.interrupts import restore_sigint
from core.profiling import PROFILE_ENV
from lab.handle import ensure_lab
from lab.paths import RELEASES, REPO

BREAKDOWN_LAB = REPO / ".lab-bench-breakdown"
RESULTS_JSON = REPO / "bench" / "breakdown-results.json"
PROGRAM_SPOKES = 10
PROFILE_FLAG = "--program-profile"
GRPC_LOG_ENV = "PULUMI_DEBUG_GRPC"


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _requests(counts: Counter[str]) -> dict[str, int]:
    return dict(counts.most_common())


def spoke_side(runner: Runner, out: dict[str, Any]) -> Path:
    """Install and no-op review, knative-fleet on FLEET_SPOKE and kubectl on
    KUBECTL_SPOKE, with the requests each spoke received; returns the engine profile."""
    lab = ensure_lab(runner.lab_root)
    runner.toolchain = lab.bin
    session = Session(runner, Options())
    try:
        stack = session.stack(lab, "one")
        out.update(machine_facts(lab.bin, stack.env))
        stack.configure([bench_entry(FLEET_SPOKE)])
        log(f"first-install preview on {FLEET_SPOKE}")
        out["fleet_first_preview_steps"] = configgroup.preview_steps(
            stack.must("pulumi preview --json", "preview", "--json"))
        log(f"pulumi up on {FLEET_SPOKE}")
        cpu = control_plane_cpu(lab, [FLEET_SPOKE])
        stack.env[PROFILE_ENV] = str(program_profile_path(runner, "install"))
        with Requests(lab.spoke(FLEET_SPOKE).api()) as requests:
            res = stack.install()
        out["fleet_install"] = configgroup.figures(res)
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
        out["fleet_preview"] = configgroup.figures(res)
        out["fleet_preview_requests"] = _requests(requests.counts)
        out["fleet_preview_grpc"] = preview_calls(runner, stack)

        cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                                  "fleet": [bench_entry(KUBECTL_SPOKE)]})
        base = render_baseline(cfg.fleet[0], cfg.release_base)
        kubectl = Kubectl(lab, KUBECTL_SPOKE, runner)
        log(f"kubectl apply + wait on {KUBECTL_SPOKE}")
        cpu = control_plane_cpu(lab, [KUBECTL_SPOKE])
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
        out["fleet_destroy"] = configgroup.figures(stack.must(
            "pulumi destroy", "destroy", "--yes", "--skip-preview", sample_rss=True))
        kubectl.delete(applied)
        kubectl.assert_fresh(KUBECTL_SPOKE)
        Kubectl(lab, FLEET_SPOKE, runner).assert_fresh(FLEET_SPOKE)
        out["configgroup"] = configgroup.trial(lab, runner, f"{stack.stack}-trial",
                                               FLEET_SPOKE)
    finally:
        session.drop_stacks()
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


def program_profile_path(runner: Runner, name: str) -> Path:
    return runner.lab_root / "work" / f"program-{name}.prof"


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
    res = runner.run([sys.executable, "-m", "bench.breakdown", PROFILE_FLAG,
                      str(PROGRAM_SPOKES), str(mocks)], dict(os.environ))
    if not res.ok:
        raise res.fail("program profile")
    out["program_spokes"] = PROGRAM_SPOKES
    out["program_profiles"] = {
        "install": _profile(program_profile_path(runner, "install")),
        "preview": _profile(program_profile_path(runner, "preview")),
        "mocks": _profile(mocks),
    }


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog=report.PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(PROFILE_FLAG, nargs=2, metavar=("SPOKES", "OUT"), help=argparse.SUPPRESS)
    p.add_argument("--report-only", action="store_true",
                   help=f"write the section again from {RESULTS_JSON.name}, measuring nothing")
    args = p.parse_args(argv)
    if args.report_only:
        report.write(json.loads(RESULTS_JSON.read_text()), RESULTS_JSON, BENCHMARKS_MD)
        return 0
    if args.program_profile:
        program_profile.profile_program(int(args.program_profile[0]),
                                        Path(args.program_profile[1]))
        return 0
    signal.signal(signal.SIGTERM, _on_sigterm)
    out: dict[str, Any] = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                           "command": report.PROG, "machine_load_start": load_average()}
    runner = Runner(BREAKDOWN_LAB)

    def work() -> None:
        fresh_lab(runner, 2)
        profile = spoke_side(runner, out)
        engine_side(runner, profile, out)
        program_side(runner, out)

    if not on_own_lab(runner, work):
        return 1
    out["machine_load_end"] = load_average()
    report.write(out, RESULTS_JSON, BENCHMARKS_MD)
    print(report.markdown(out))
    return 0


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())

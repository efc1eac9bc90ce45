"""The program's own cost, without cluster or engine: `deploy()` for N spokes under
Pulumi's mocks, in a fresh process per size so caches and memory start empty."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.commands import Runner
from bench.design import TRIAL_MODES, TRIAL_SIZES
from bench.log import log
from bench.metrics import ProgramFigures, Samples
from config.fleet import parse_fleet_config
from knative import plan as planning
from knative import releases
from lab.paths import RELEASES

CHILD_FLAG = "--program-child"
REGISTRATION_FLAG = "--program-registration"
PRODUCT = "product"


def own_peak_rss_bytes() -> int:
    """This process's own peak resident memory: the kernel's high-water mark of its
    address space (VmHWM), which starts anew at exec. `getrusage`'s ru_maxrss does not:
    it keeps the peak of the process before exec, the benchmark that forked it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _trial_registration(mode: str, cfg: Any, conn: Any) -> Callable[[], Any]:
    """The trial's registration of every spoke of `cfg` in place of the product's
    `deploy()`: a provider per spoke, then a ConfigGroup per install stage."""
    import pulumi
    import pulumi_kubernetes as k8s

    from bench.configgroup_trial.registration import register

    plan_seconds = [0.0]

    def run() -> Any:
        urns = []
        for entry in cfg.fleet:
            start = time.perf_counter()
            plans = planning.plan_spoke(entry.serving, entry.eventing, cfg.release_base, {})
            plan_seconds[0] += time.perf_counter() - start
            kubeconfig = json.dumps({"clusters": [{"name": entry.name,
                                                   "cluster": {"server": conn.server}}]})
            provider = k8s.Provider(entry.name, kubeconfig=pulumi.Output.secret(kubeconfig),
                                    enable_server_side_apply=True)
            urns.extend(r.urn for r in register(entry.name, plans, provider, mode))
        return pulumi.Output.all(*urns)

    run.plan_seconds = plan_seconds  # type: ignore[attr-defined]
    return run


def program_child(n: int, registration: str = PRODUCT) -> ProgramFigures:
    """Runs the program for `n` spokes under Pulumi mocks (no cluster, no engine), with
    spoke resolution faked as tests/unit/components/test_fleet_program.py does; the rest
    (planning, rendering, every resource registration) is the program's own code."""
    import pulumi
    import pulumi_kubernetes  # noqa: F401 - imported before the clock starts

    from core.program_runtime import use_program_runtime

    use_program_runtime()  # as __main__ does

    from access import SpokeConnection
    from components import fleet as fleet_mod

    registered: Counter[str] = Counter()

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
            registered[args.typ.split(":")[0]] += 1
            outputs = dict(args.inputs)
            if args.typ == "kubernetes:core/v1:ConfigMap":
                outputs["metadata"] = {**args.inputs.get("metadata", {}),
                                       "uid": f"uid-{args.name}"}
            return f"{args.name}-id", outputs

        def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
            return {}

    conn = SpokeConnection(
        server="https://127.0.0.1:6443", certificate_authority_data=None, proxy_url=None,
        tls_server_name=None, insecure_skip_tls_verify=False, provider_name="secretreader",
        exec_api_version="client.authentication.k8s.io/v1", command="/bin/secretreader",
        args=(), env=(), provide_cluster_info=True, exec_extension={"clusterName": "s"})
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": f"spoke-{i}", "clusterProfileRef": {"name": f"spoke-{i}",
                                                                "namespace": "fleet-system"},
                   "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}}
                  for i in range(1, n + 1)],
    })
    plan_seconds = [0.0]

    def fake_resolve(cfg: Any, entries: list[Any], *_: Any) -> list[Any]:
        start = time.perf_counter()
        out = [fleet_mod.SpokeResult(entry=e, connection=conn, server_version="v1.36.3",
                                     plans=planning.plan_spoke(e.serving, e.eventing,
                                                               cfg.release_base, {}))
               for e in entries]
        plan_seconds[0] += time.perf_counter() - start
        return out

    fleet_mod.resolve_fleet = fake_resolve  # type: ignore[assignment]
    pulumi.runtime.set_mocks(Mocks(), preview=False)
    trial = None if registration == PRODUCT else _trial_registration(registration, cfg, conn)

    @pulumi.runtime.test
    def program() -> Any:
        if trial is not None:
            return trial()
        spokes = fleet_mod.deploy(cfg)
        return pulumi.Output.all(*[s.ready for s in spokes.values()])

    releases.load_documents.cache_clear()
    start = time.perf_counter()
    program()  # returns once every registration has completed
    seconds = time.perf_counter() - start
    info = releases.load_documents.cache_info()
    if trial is not None:
        plan_seconds = trial.plan_seconds  # type: ignore[attr-defined]
    return ProgramFigures(
        spokes=n,
        ms=seconds * 1000,
        plan_ms=plan_seconds[0] * 1000,
        resources=sum(registered.values()),
        load_documents_calls=info.hits + info.misses,
        load_documents_parses=info.misses,
        peak_rss_bytes=own_peak_rss_bytes(),
    )


def child_figures(runner: Runner, n: int, registration: str) -> ProgramFigures:
    res = runner.run([sys.executable, "-m", "bench", CHILD_FLAG, str(n), REGISTRATION_FLAG,
                      registration], dict(os.environ))
    if not res.ok:
        raise res.fail(f"program under mocks ({n} spokes, {registration} registration)")
    return ProgramFigures.from_json(json.loads(res.stdout.strip().splitlines()[-1]))


def _add(samples: Samples, prefix: str, n: int, got: ProgramFigures,
         fields: tuple[str, ...]) -> None:
    for name in fields:
        samples.add(f"{prefix}{name}_{n}", getattr(got, name))


def measure_trial(runner: Runner, samples: Samples, run_no: int) -> None:
    """The ConfigGroup trial's registration paths under the same mocks."""
    for mode in TRIAL_MODES:
        for n in TRIAL_SIZES:
            log(f"run {run_no}: ConfigGroup trial ({mode}) under mocks, {n} spoke(s)")
            _add(samples, f"program_trial_{mode}_", n, child_figures(runner, n, mode),
                 ("ms", "resources", "peak_rss_bytes"))


def measure_program(runner: Runner, samples: Samples, sizes: tuple[int, ...],
                    run_no: int) -> None:
    """The program's own time for each size, each in a fresh process."""
    for n in sizes:
        log(f"run {run_no}: program under mocks, {n} spoke(s)")
        _add(samples, "program_", n, child_figures(runner, n, PRODUCT),
             ("ms", "plan_ms", "resources", "load_documents_calls", "load_documents_parses",
              "peak_rss_bytes"))

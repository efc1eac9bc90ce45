"""The program's own cost, without cluster or engine: `deploy()` for N spokes under
Pulumi's mocks, and the Python SDK's floor under the same mocks (N release objects with
no inputs but a name). Each runs in a fresh process (`python -m bench --program-child N`,
`--floor-child N`), so caches and memory start empty."""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from typing import Any

import psutil

from bench.commands import Runner
from bench.metrics import ProgramFigures
from bench.polling import Poller
from config.fleet import parse_fleet_config
from knative.release_fetch import load_documents
from lab.paths import RELEASES

CHILD_FLAG = "--program-child"
FLOOR_FLAG = "--floor-child"


class PeakRss(Poller):
    """This process's peak resident memory while a `with` block runs, read through psutil
    every `interval` seconds and once after it. The program keeps every resource it
    registers until it ends, so its memory is at its highest at the end."""

    def __init__(self, interval: float = 0.05) -> None:
        super().__init__(interval)
        self._process = psutil.Process()
        self.bytes = 0

    def poll(self) -> None:
        self.bytes = max(self.bytes, self._process.memory_info().rss)


def _runtime() -> Any:
    """The SDK with the program's runtime settings, as __main__ sets them."""
    import pulumi

    from sdk_speedups.runtime import use_program_runtime

    use_program_runtime()
    return pulumi


class _ReachedInventory:
    """An inventory (access.inventory.Inventory) without a hub or a cluster: every spoke
    reached at one address on Kubernetes 1.36, nothing installed yet."""

    def __init__(self) -> None:
        from access import PluginCredential, ResolvedSpoke, SpokeConnection, SpokeFacts

        conn = SpokeConnection(
            server="https://127.0.0.1:6443", certificate_authority_data=None, proxy_url=None,
            tls_server_name=None, insecure_skip_tls_verify=False, provider_name="secretreader",
            exec_api_version="client.authentication.k8s.io/v1", command="/bin/secretreader",
            args=(), env=(), provide_cluster_info=True, exec_extension={"clusterName": "s"})
        self._reached = ResolvedSpoke(conn, PluginCredential(token="t"), "v1.36.3",
                                      SpokeFacts(namespaces={}, installed={}))

    def open(self) -> None:
        pass

    def cluster_profiles(self, namespace: str) -> list[dict]:
        return []

    def reach(self, *_: Any) -> Any:
        return self._reached


def _fleet_config(n: int) -> Any:
    """The fleet config of `n` spokes, each with Serving and Eventing."""
    return parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": f"spoke-{i}", "clusterProfileRef": {"name": f"spoke-{i}",
                                                                "namespace": "fleet-system"},
                   "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}}
                  for i in range(1, n + 1)],
    })


def program_child(n: int) -> ProgramFigures:
    """Runs the program for `n` spokes under Pulumi mocks (no cluster, no engine), the hub
    and the spokes faked by `_ReachedInventory`; the rest (planning, rendering, every
    resource registration) is the program's own code. `plan_ms` is the planner's share
    (fleet.plan_fleet), the rest is registration."""
    import pulumi_kubernetes  # noqa: F401 - imported before the clock starts

    pulumi = _runtime()
    from components.fleet import register_fleet
    from fleet import plan_fleet

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

    cfg = _fleet_config(n)
    plan_seconds = [0.0]
    pulumi.runtime.set_mocks(Mocks(), preview=False)

    @pulumi.runtime.test
    def program() -> Any:
        start = time.perf_counter()
        plan = plan_fleet(cfg, _ReachedInventory())
        plan_seconds[0] = time.perf_counter() - start
        spokes = register_fleet(plan)
        return pulumi.Output.all(*[s.ready for s in spokes.values()])

    load_documents.cache_clear()
    with PeakRss() as peak:
        start = time.perf_counter()
        program()  # returns once every registration has completed
        seconds = time.perf_counter() - start
    info = load_documents.cache_info()
    return ProgramFigures(
        spokes=n,
        ms=seconds * 1000,
        plan_ms=plan_seconds[0] * 1000,
        resources=sum(registered.values()),
        load_documents_calls=info.hits + info.misses,
        load_documents_parses=info.misses,
        peak_rss_bytes=peak.bytes,
    )


def floor_child(n: int) -> dict[str, Any]:
    """Registers `n` resources as the program registers a release object, minus its
    inputs, and waits for every one: no registration of one Python resource per object
    costs less."""
    pulumi = _runtime()

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
            return f"{args.name}-id", {}

        def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
            return {}

    pulumi.runtime.set_mocks(Mocks(), preview=False)
    from components.release_object import ReleaseObject

    @pulumi.runtime.test
    def program() -> Any:
        objs = [ReleaseObject("kubernetes:core/v1:ConfigMap", f"floor-{i}",
                              {"metadata": {"name": f"floor-{i}"}}) for i in range(n)]
        return pulumi.Output.all(*[o.urn for o in objs])

    with PeakRss() as peak:
        start = time.perf_counter()
        program()
        ms = (time.perf_counter() - start) * 1000
    return {"resources": n, "ms": ms, "peak_rss_bytes": peak.bytes}


def child(runner: Runner, flag: str, n: int) -> dict[str, Any]:
    """A child's figures (`flag` CHILD_FLAG or FLOOR_FLAG), from its last line."""
    res = runner.run([sys.executable, "-m", "bench", flag, str(n)], dict(os.environ))
    if not res.ok:
        raise res.fail(f"python -m bench {flag} {n}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def child_figures(runner: Runner, n: int) -> ProgramFigures:
    """The program under mocks for `n` spokes, in a fresh process."""
    return ProgramFigures.from_json(child(runner, CHILD_FLAG, n))

"""The breakdown section's parsing: the API server's request counter, `go tool pprof -top`
rows, cProfile areas, the engine's gRPC log, and a report that shows both sides of every
request and knative-fleet's commands by process."""

from __future__ import annotations

import json
import os
from collections import Counter

from bench.breakdown import engine_profile, grpc_calls, program_profile, report
from bench.breakdown.requests import by_verb, delta, request_counts
from lab.paths import REPO

# ruff: noqa: E501 - verbatim metrics and pprof output

# Real exposition lines: the metric format does not wrap.
METRICS = """\
# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 12
apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="namespaces",scope="resource",subresource="status",verb="GET",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/openapi/v3",verb="GET",version=""} 7
# HELP apiserver_request_duration_seconds x
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{verb="GET",le="0.1"} 99
"""


def test_requests_by_verb_and_resource() -> None:
    counts = request_counts(METRICS)
    assert counts == Counter({"APPLY deployments": 15, "GET namespaces/status": 4,
                              "GET (none)//openapi/v3": 7})
    later = Counter(counts)
    later["APPLY deployments"] += 5
    later["LIST pods"] = 2
    assert delta(counts, later) == Counter({"APPLY deployments": 5, "LIST pods": 2})
    assert by_verb(later)["GET"] == 11


PPROF = """\
File: pulumi
Type: cpu
Duration: 9.81s, Total samples = 12.50s (127.42%)
Showing nodes accounting for 12.50s, 100% of 12.50s total
      flat  flat%   sum%        cum   cum%
     2.50s 20.00% 20.00%      2.50s 20.00%  compress/flate.(*compressor).deflate
     900ms  7.20% 27.20%      5.10s 40.80%  github.com/pulumi/pulumi/pkg/v3/resource/deploy.(*stepGenerator).GenerateSteps
      10ms  0.08% 27.28%      1.00s  8.00%  runtime.mallocgc
"""


def test_engine_profile_rows_and_packages() -> None:
    rows = engine_profile.parse_top(PPROF)
    assert rows == [("compress/flate.(*compressor).deflate", 2.5),
                    ("github.com/pulumi/pulumi/pkg/v3/resource/deploy.(*stepGenerator)."
                     "GenerateSteps", 0.9), ("runtime.mallocgc", 0.01)]
    packages = engine_profile.by_package(rows)
    assert packages["compress/flate"] == 2.5
    assert packages["github.com/pulumi/pulumi/pkg/v3/resource/deploy"] == 0.9
    assert packages["runtime"] == 0.01


def test_program_areas() -> None:
    site = f"{os.sep}venv{os.sep}lib{os.sep}site-packages{os.sep}"
    assert program_profile.area(f"{site}pulumi{os.sep}runtime{os.sep}resource.py") \
        == "Pulumi SDK"
    assert program_profile.area(f"{site}pulumi_kubernetes{os.sep}x.py") == "pulumi_kubernetes"
    assert program_profile.area(f"{site}grpc{os.sep}_channel.py") == "gRPC and protobuf"
    assert program_profile.area(str(REPO / "knative" / "manifests.py")) \
        == "knative-fleet: knative"
    assert program_profile.area("~") == "builtins"


def test_the_report_shows_both_sides() -> None:
    run = {"s": 30.0, "cpu_s": 20.0, "cpu_by_kind_s": {"engine": 12.0, "program": 8.0}}
    results = {
        "command": "python -m bench --section breakdown", "date": "today", "machine_load_start": "0.5 1 1",
        "machine_load_end": "3.5 2 1", "machine_cpu_count": 2, "objects": 230,
        "fleet_install": run, "kubectl_install_s": 10.0, "fleet_destroy": run,
        "fleet_first_preview_steps": 240,
        "fleet_install_spoke_cpu_s": 20.0, "kubectl_install_spoke_cpu_s": 6.0,
        "fleet_install_requests": {"APPLY deployments": 15, "GET (none)//openapi/v3": 30},
        "kubectl_install_requests": {"APPLY deployments": 15},
        "fleet_preview": run, "kubectl_diff_s": 2.0,
        "fleet_preview_requests": {"GET deployments": 15}, "kubectl_diff_requests": {},
        "engine_cpu_s": 10.0, "engine_packages": {"compress/flate": 5.0},
        "engine_functions": {"compress/flate.deflate": 5.0},
        "program_spokes": 10,
        "program_profiles": {name: {"cpu_s": 8.0, "areas": {"Pulumi SDK": 4.0},
                                    "functions": [["f", 1.0, 3]]}
                             for name in ("install", "preview", "mocks")},
    }
    text = report.markdown(results)
    assert "| `GET (none)//openapi/v3` | 30 | 0 |" in text
    assert "| **all** | **45** | **15** |" in text
    assert "| `compress/flate` | 5.00 | 50 % |" in text
    assert text.count("| `Pulumi SDK` | 4.00 | 50 % |") == 3
    assert "| steps a first-install preview shows | 240 |" in text
    assert "| install: wall / CPU | 30.0 s / 20.0 s |" in text
    assert "| install: CPU of the engine | 12.0 s |" in text
    assert "| destroy: CPU of the provider | 0.0 s |" in text
    assert "Other work shared the machine" in text  # load 3.5 on 2 cores
    results["machine_load_end"] = "1.5 1 1"
    assert "Other work shared the machine" not in report.markdown(results)


def _line(method: str, progress: str, at: str, urn: str = "", duration_ns: int = 0) -> str:
    entry = {"method": f"/pulumirpc.ResourceProvider/{method}", "progress": progress,
             "timestamp": f"2026-11-26T03:33:{at}Z", "request": {"urn": urn} if urn else {}}
    if progress == "response_completed":
        entry["duration"] = duration_ns
    return json.dumps(entry)


CRD = ("urn:pulumi:demo::knative-fleet::knative-fleet:index:Spoke$kubernetes:"
       "apiextensions.k8s.io/v1:CustomResourceDefinition::spoke-1:a.b")
ROLE = ("urn:pulumi:demo::knative-fleet::knative-fleet:index:Spoke$kubernetes:"
        "rbac.authorization.k8s.io/v1:ClusterRole::spoke-1:r")


def test_grpc_calls_per_kind_and_milestones() -> None:
    lines = [
        _line("Run", "request_started", "01.000000"),
        json.dumps({"method": "/x/RegisterResource", "progress": "response_completed",
                    "timestamp": "0001-01-01T00:00:00Z", "duration": 5}),
        _line("Check", "request_started", "01.500000", CRD),
        _line("Check", "response_completed", "01.510000", CRD, 10_000_000),
        _line("Diff", "response_completed", "01.520000", CRD, 8_000_000),
        _line("Check", "request_started", "02.000000", ROLE),
        _line("Check", "response_completed", "02.002000", ROLE, 2_000_000),
        _line("Check", "response_completed", "02.004000", ROLE, 4_000_000),
        _line("Run", "response_completed", "03.250000", duration_ns=2_250_000_000),
    ]
    calls = grpc_calls.read_calls(lines)
    assert len(calls) == 8  # the untimed call is left out
    kinds = grpc_calls.per_kind(calls)
    assert kinds["Check"] == {"ClusterRole": [2, 6.0], "CustomResourceDefinition": [1, 10.0]}
    assert kinds["Diff"] == {"CustomResourceDefinition": [1, 8.0]}
    assert grpc_calls.milestones(calls) == {
        "program_started_s": 0.0, "first_check_s": 0.5, "last_check_s": 1.0,
        "program_done_s": 2.25}
    section = "\n".join(report.grpc_section({"fleet_preview_grpc": {
        "s": 3.0, "per_kind": kinds, **grpc_calls.milestones(calls)}}))
    assert "| ClusterRole | 2 | 6 | 3.0 | 0 | 0.0 |" in section
    assert "| **all** | 3 | 16 | 5.3 | 8 | 2.7 |" in section

"""The breakdown section's outputs, from its figures alone: its section of docs/performance.md,
which the terminal shows too."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.breakdown.requests import by_verb

TOP_REQUESTS = 20


def busy_note(r: dict[str, Any]) -> list[str]:
    """Said when other work shared the machine: wall times then mean little."""
    loads = [float(r[k].split()[0]) for k in ("machine_load_start", "machine_load_end")]
    if max(loads) <= (r.get("machine_cpu_count") or 1):
        return []
    return ["", "**Other work shared the machine during this run (1-minute load above its "
            "cores): the wall times are not comparable with other runs; request counts, "
            "shares of a profile and CPU seconds are.**"]


def _sum(counts: dict[str, int]) -> int:
    return sum(counts.values())


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "n/a"


def requests_table(left: dict[str, int], right: dict[str, int], names: tuple[str, str],
                   top: int = TOP_REQUESTS) -> list[str]:
    """By verb, then the `top` requests of either side, side by side."""
    verbs_l, verbs_r = by_verb(Counter(left)), by_verb(Counter(right))
    lines = [f"| verb | {names[0]} | {names[1]} |", "|---|---|---|"]
    for verb in sorted(set(verbs_l) | set(verbs_r), key=lambda v: -(verbs_l[v] + verbs_r[v])):
        lines.append(f"| {verb} | {verbs_l[verb]} | {verbs_r[verb]} |")
    lines.append(f"| **all** | **{_sum(left)}** | **{_sum(right)}** |")
    keys = sorted(set(left) | set(right), key=lambda k: -(left.get(k, 0) + right.get(k, 0)))
    lines += ["", f"| request | {names[0]} | {names[1]} |", "|---|---|---|"]
    lines += [f"| `{k}` | {left.get(k, 0)} | {right.get(k, 0)} |" for k in keys[:top]]
    return lines


def _seconds_table(head: str, rows: dict[str, float], total: float,
                   unit: str = "CPU seconds") -> list[str]:
    lines = [f"| {head} | {unit} | share |", "|---|---|---|"]
    lines += [f"| `{name}` | {secs:.2f} | {_pct(secs, total)} |" for name, secs in rows.items()]
    return lines


PROGRAM_TITLES = {
    "install": "the install (`pulumi up`, 1 spoke)",
    "preview": "the no-op preview (1 spoke)",
    "mocks": "{spokes} spokes under mocks (as `python -m bench` times it)",
}


def program_sections(r: dict[str, Any]) -> list[str]:
    """The program's own time by area and its busiest functions, per profile."""
    lines: list[str] = []
    for name, title in PROGRAM_TITLES.items():
        prof = r["program_profiles"][name]
        lines += ["", f"### The program: {title.format(spokes=r['program_spokes'])}", "",
                  f"cProfile of the program's main thread, by the wall clock: "
                  f"{prof['cpu_s']:.1f} s of own time in all. `builtins` are calls into C: "
                  "with the engine, mostly the main thread waiting for it (`epoll`, locks, "
                  "gRPC's `_blocking`); under mocks there is no engine to wait for.", "",
                  *_seconds_table("area", prof["areas"], prof["cpu_s"], "seconds"), "",
                  "| function | own seconds | calls |", "|---|---|---|",
                  *[f"| `{fn}` | {secs:.2f} | {calls} |" for fn, secs, calls in
                    prof["functions"][:10]]]
    return lines


KIND_ORDER = ("engine", "program", "provider", "language_host")


def _run(fig: dict[str, Any]) -> str:
    return f"{fig['s']:.1f} s / {fig['cpu_s']:.1f} s"


def processes_section(r: dict[str, Any]) -> list[str]:
    """knative-fleet's install, no-op preview and destroy, by kind of process."""
    lines = [
        "### knative-fleet's commands by process",
        "",
        "Wall / CPU of each command's whole process tree, and the CPU of each kind of "
        "process in it. The install and the no-op preview ran with the program's profiler "
        "on (above), which slows the program.",
        "",
        "| figure | knative-fleet |",
        "|---|---|",
        f"| steps a first-install preview shows | {r['fleet_first_preview_steps']} |",
    ]
    for op, name in (("install", "install"), ("preview", "no-op preview"),
                     ("destroy", "destroy")):
        run = r[f"fleet_{op}"]
        lines.append(f"| {name}: wall / CPU | {_run(run)} |")
        lines += [f"| {name}: CPU of the {kind.replace('_', ' ')} | "
                  f"{run['cpu_by_kind_s'].get(kind, 0.0):.1f} s |" for kind in KIND_ORDER]
    return lines


def grpc_section(r: dict[str, Any], top: int = 10) -> list[str]:
    """The provider per object: the engine's Check and Diff calls in a no-op preview."""
    g = r.get("fleet_preview_grpc")
    if not g:
        return []
    lines = [
        "### The provider per object: the engine's calls in a no-op preview",
        "",
        f"A further no-op `pulumi preview --diff` with `PULUMI_DEBUG_GRPC` (the engine logs "
        f"every call; the log is read into these figures and deleted): {g['s']:.1f} s, of "
        f"which the log itself costs some. Seconds from the engine's first call to the "
        f"language host: the program started at {g['program_started_s']:.2f} s, the first "
        f"resource's `Check` was sent at {g['first_check_s']:.2f} s and the last at "
        f"{g['last_check_s']:.2f} s, the program ended at {g['program_done_s']:.2f} s. "
        "The engine takes the registrations one at a time, with a `Check` and then a `Diff` "
        "call to the provider for each object: once the program has declared its "
        "resources, these calls are the preview's path.",
        "",
        "| kind | objects | `Check`, ms in all | `Check`, ms each | `Diff`, ms in all | "
        "`Diff`, ms each |",
        "|---|---|---|---|---|---|",
    ]
    checks, diffs = g["per_kind"]["Check"], g["per_kind"]["Diff"]
    for kind in list(checks)[:top]:
        n, check_ms = checks[kind]
        dn, diff_ms = diffs.get(kind, [0, 0.0])
        lines.append(f"| {kind} | {n:.0f} | {check_ms:.0f} | {check_ms / n:.1f} | "
                     f"{diff_ms:.0f} | {diff_ms / dn if dn else 0:.1f} |")
    total_n = sum(v[0] for v in checks.values())
    total_c = sum(v[1] for v in checks.values())
    total_d = sum(v[1] for v in diffs.values())
    lines.append(f"| **all** | {total_n:.0f} | {total_c:.0f} | {total_c / total_n:.1f} | "
                 f"{total_d:.0f} | {total_d / total_n:.1f} |" if total_n else "| **all** | 0 |")
    return lines


def markdown(r: dict[str, Any]) -> str:
    fi, ki = r["fleet_install_requests"], r["kubectl_install_requests"]
    lines = [
        "## Where one install's and one no-op preview's time goes",
        "",
        f"Generated by `{r['command']}` on {r['date']} (one run; load average at start and "
        f"end {r['machine_load_start']} / {r['machine_load_end']}). Do not edit: run it "
        f"again. knative-fleet installs Serving (Kourier) + Eventing 1.23 on a fresh spoke "
        f"({r['objects']} objects); kubectl applies the same objects on another fresh spoke "
        "(as in measurement 1 above). Requests are the spoke API server's own "
        "`apiserver_request_total`, read before and after each command.",
        *busy_note(r),
        "",
        "### The spoke: install",
        "",
        "| figure | knative-fleet `pulumi up` | kubectl apply + wait |",
        "|---|---|---|",
        f"| wall | {r['fleet_install']['s']:.1f} s | {r['kubectl_install_s']:.1f} s |",
        f"| the spoke's control plane CPU | {r['fleet_install_spoke_cpu_s']:.1f} s | "
        f"{r['kubectl_install_spoke_cpu_s']:.1f} s |",
        f"| requests | {_sum(fi)} | {_sum(ki)} |",
        "",
        *requests_table(fi, ki, ("knative-fleet", "kubectl")),
        "",
        "### The spoke: no-op review",
        "",
        f"`pulumi preview --diff` took {r['fleet_preview']['s']:.1f} s and `kubectl diff "
        f"--server-side` {r['kubectl_diff_s']:.1f} s.",
        "",
        *requests_table(r["fleet_preview_requests"], r["kubectl_diff_requests"],
                        ("`pulumi preview`", "`kubectl diff`")),
        "",
        "### The engine: CPU of the no-op preview by Go package",
        "",
        f"`pulumi preview --profiling`, read with `go tool pprof -top`: "
        f"{r['engine_cpu_s']:.1f} CPU seconds sampled in the engine process (its plugins "
        "are other processes).",
        "",
        *_seconds_table("package", r["engine_packages"], r["engine_cpu_s"]),
        "",
        *_seconds_table("function", r["engine_functions"], r["engine_cpu_s"]),
        "",
        *grpc_section(r),
        "",
        *program_sections(r),
        "",
        *processes_section(r),
    ]
    return "\n".join(lines) + "\n"


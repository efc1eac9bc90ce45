"""The cost section's outputs, from its figures alone: a table on the terminal and its
section of docs/performance.md."""

from __future__ import annotations

from typing import Any

from bench.cost.design import (
    ONE_STACK,
    OPERATIONS,
    SHARDINGS,
    TARGETS,
    VARIANT_SPOKES,
    VARIANTS,
)
from bench.report import fmt, fmt_ratio

KIND_COLUMNS = ("engine", "language_host", "program", "provider")


def _f(results: dict[str, Any], key: str) -> str:
    return fmt(key, results.get(key))


def _ratio(results: dict[str, Any], key: str) -> str:
    return fmt_ratio(results.get(key))


def targets_table(results: dict[str, Any]) -> list[str]:
    lines = ["| target | key | value | verdict |", "|---|---|---|---|"]
    for target in TARGETS:
        key = target.key
        value = _ratio(results, key) if "_vs_" in key else _f(results, key)
        lines.append(f"| {target.label} | `{key}` | {value} | "
                     f"{results.get(f'target_{key}') or 'n/a'} |")
    return lines


def one_stack_table(results: dict[str, Any]) -> list[str]:
    head = ("| spokes | operation | wall | CPU, Pulumi side | per spoke | "
            + " | ".join(KIND_COLUMNS) + " | peak memory | machine busy | spokes' own "
            "control planes |")
    lines = [head, "|" + "---|" * (9 + len(KIND_COLUMNS) - 1)]
    for n in ONE_STACK:
        for op in OPERATIONS:
            p = f"one_{n}_{op}"
            kinds = " | ".join(_f(results, f"{p}_cpu_{kind}_s") for kind in KIND_COLUMNS)
            lines.append(f"| {n} | {op} | {_f(results, p + '_s')} | {_f(results, p + '_cpu_s')} "
                         f"| {_f(results, p + '_cpu_per_spoke_s')} | {kinds} | "
                         f"{_f(results, p + '_rss_bytes')} | {_f(results, p + '_busy_pct')} | "
                         f"{_f(results, p + '_spokes_cpu_s')} |")
    return lines


def extra_spoke_table(results: dict[str, Any]) -> list[str]:
    small, big = ONE_STACK[0], ONE_STACK[-1]
    lines = [f"| operation | CPU of 1 spoke | CPU per extra spoke ({small} -> {big}) | "
             "extra / single |", "|---|---|---|---|"]
    for op in OPERATIONS:
        lines.append(f"| {op} | {_f(results, f'one_{small}_{op}_cpu_s')} | "
                     f"{_f(results, f'one_{op}_cpu_per_extra_spoke_s')} | "
                     f"{_ratio(results, f'one_{op}_extra_vs_single')} |")
    lines.append(f"| memory (install peak) | {_f(results, f'one_{small}_install_rss_bytes')} "
                 f"| {_f(results, 'one_install_rss_per_extra_spoke_bytes')} | |")
    return lines


def shards_table(results: dict[str, Any]) -> list[str]:
    lines = ["| stacks x spokes | operation | wall | CPU, Pulumi side | runner's own CPU | "
             "per spoke | peak memory, runner's tree | machine memory in use | machine busy "
             "| against one stack of the same spokes (wall / CPU / memory) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for sharding in SHARDINGS:
        for op in OPERATIONS:
            p = f"shards_{sharding.key}_{op}"
            against = "n/a (not measured as one stack)"
            if sharding.total in ONE_STACK:
                against = " / ".join(_ratio(results, f"{p}_{x}_vs_one_stack")
                                     for x in ("s", "cpu", "rss"))
            lines.append(
                f"| {sharding.stacks} x {sharding.spokes} | {op} | {_f(results, p + '_s')} | "
                f"{_f(results, p + '_cpu_s')} | {_f(results, p + '_cpu_runner_s')} | "
                f"{_f(results, p + '_cpu_per_spoke_s')} | {_f(results, p + '_rss_bytes')} | "
                f"{_f(results, p + '_machine_used_bytes')} | {_f(results, p + '_busy_pct')} | "
                f"{against} |")
    return lines


def variants_table(results: dict[str, Any]) -> list[str]:
    lines = ["| setting | operation | wall | CPU, Pulumi side | peak memory | against the "
             "defaults (wall / CPU / memory) |", "|---|---|---|---|---|---|"]
    for op in OPERATIONS:
        p = f"one_{VARIANT_SPOKES}_{op}"
        lines.append(f"| defaults | {op} | {_f(results, p + '_s')} | "
                     f"{_f(results, p + '_cpu_s')} | {_f(results, p + '_rss_bytes')} | |")
    for variant in VARIANTS:
        for op in OPERATIONS:
            p = f"variant_{variant.key}_{op}"
            against = " / ".join(_ratio(results, f"{p}_{x}_vs_default")
                                 for x in ("s", "cpu_s", "rss_bytes"))
            lines.append(f"| {variant.name} | {op} | {_f(results, p + '_s')} | "
                         f"{_f(results, p + '_cpu_s')} | {_f(results, p + '_rss_bytes')} | "
                         f"{against} |")
    return lines


def accounting_table(results: dict[str, Any]) -> list[str]:
    """Sampled CPU against the kernel's count of what was reaped: how much sampling
    missed (or, where the engine does not wait for a plugin, the kernel did)."""
    lines = ["| command | sampled, whole tree | kernel, reaped children |", "|---|---|---|"]
    for n in ONE_STACK:
        for op in OPERATIONS:
            p = f"one_{n}_{op}"
            lines.append(f"| {n} spoke(s), {op} | {_f(results, p + '_tree_cpu_s')} | "
                         f"{_f(results, p + '_reaped_cpu_s')} |")
    return lines


def markdown(results: dict[str, Any]) -> str:
    """The section's body, every figure from `results`."""
    runs = results["runs"]
    lines = [
        "## What a spoke costs the machine that runs Pulumi",
        "",
        f"Generated by `{results['command']}` on {results['date']}. Do not edit: run it "
        f"again. Each figure is the median of {runs} run(s); load average at start and end: "
        f"{results['machine_load_start']} / {results['machine_load_end']}.",
        "",
        "CPU seconds are the user + system time of every process in the command's tree "
        "(the engine `pulumi`, the language host, the Python program, the Kubernetes "
        "providers, the access plugins they start), sampled every 0.2 s with psutil; the "
        "spokes' own control planes are not in it and are shown apart. Peak memory is the "
        "tree's resident memory summed, at its highest. Lab: kwok `--runtime binary` "
        "spokes on the same 2 cores. Every run installs fresh spokes (Serving with "
        "Kourier + Eventing 1.23, CRDs deleted on destroy).",
        "",
        "### Targets", "", *targets_table(results),
        "", "### One stack", "", *one_stack_table(results),
        "", "### Per extra spoke", "", *extra_spoke_table(results),
        "", "### Shards through the fleet runner", "",
        "Each sharding's stacks are one ring, all run at once (`python -m runner "
        "OPERATION --parallel <stacks>`); the runner's own CPU (its process and one "
        "worker process per stack) is shown apart from the Pulumi side.", "",
        *shards_table(results),
        "", f"### Engine and provider settings, one stack of {VARIANT_SPOKES} spokes", "",
        *variants_table(results), "",
        *[f"- `{v.name}`: {v.what}." for v in VARIANTS],
        "", "### Sampling against the kernel's count", "", *accounting_table(results),
    ]
    return "\n".join(lines) + "\n"


def terminal(results: dict[str, Any]) -> str:
    return "\n" + "\n".join(targets_table(results) + [""] + extra_spoke_table(results)) + "\n"


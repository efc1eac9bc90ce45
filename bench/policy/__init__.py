"""The spoke identity's admission policy: its size, what it adds to each request, and one
spoke's install, no-op preview and destroy with it and without it, pair by pair.

The lab's spokes run the lab's policy (the union of every version, ingress and Eventing
source: the largest plan); "without" takes its binding off the spoke for the run and puts
it back after (bench/policy-results.json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from bench.breakdown.requests import metrics_text
from bench.cost.measure import one_stack
from bench.log import log
from bench.policy import report
from bench.policy.design import PAIRS, SPOKES
from bench.policy.latency import PolicyChecks, policy_checks
from bench.policy.report import terminal
from bench.policy.summary import summarise
from bench.section import Options, Run, unchanged
from lab import register
from lab.spoke_role import lab_role_documents
from operations.access_roles import SPOKE_ROLE, spoke_documents
from tests.support.factories import two_spoke_fleet

stored = unchanged  # its section reads its results alone
__all__ = ["markdown", "measure", "results", "stored", "terminal"]


def pairs(options: Options) -> int:
    return options.pairs or PAIRS


def policy_sizes() -> dict[str, int]:
    """Bytes of the policy (JSON) for the lab's largest plan and for a two-spoke stack of
    Serving and Eventing, and the largest CEL expression of each."""
    largest = lab_role_documents(register.SPOKE_SA, register.SPOKE_SA_NAMESPACE)[0]
    stack = spoke_documents(two_spoke_fleet(), {"kind": "User", "name": "fleet"})[0]
    out = {}
    for name, policy in (("largest", largest), ("stack", stack)):
        out[f"policy_{name}_bytes"] = len(json.dumps(policy))
        out[f"policy_{name}_largest_expression_chars"] = max(
            len(v["expression"]) for v in policy["spec"]["variables"])
    return out


@contextmanager
def binding_removed(api: client.ApiClient) -> Iterator[None]:
    """The spoke without the policy's binding for the block, then with it again."""
    admission = client.AdmissionregistrationV1Api(api)
    binding = admission.read_validating_admission_policy_binding(SPOKE_ROLE)
    admission.delete_validating_admission_policy_binding(SPOKE_ROLE)
    try:
        yield
    finally:
        admission.create_validating_admission_policy_binding({
            "metadata": {"name": SPOKE_ROLE, "labels": binding.metadata.labels},
            "spec": api.sanitize_for_serialization(binding.spec)})


def measure(run: Run) -> None:
    """With the policy, then without it, on one fresh spoke, pair after pair; the policy's
    checks read from the spoke's API server metrics around each run with it."""
    stack = run.up(SPOKES, "policy")
    api = run.bench.lab.spokes[0].api()
    run.facts.update(policy_sizes())
    for pair in range(1, pairs(run.options) + 1):
        log(f"pair {pair} of {pairs(run.options)}")
        before = policy_checks(metrics_text(api))
        one_stack(run.bench, stack, run.samples, SPOKES, "with_policy")
        checks: PolicyChecks = policy_checks(metrics_text(api)) - before
        run.samples.add("checks", checks.count)
        run.samples.add("check_mean_ms", checks.mean_ms)
        run.samples.add("check_seconds", checks.seconds)
        with binding_removed(api):
            one_stack(run.bench, stack, run.samples, SPOKES, "without_policy")


def results(run: Run) -> dict[str, Any]:
    return {"pairs": pairs(run.options), **summarise(run.samples)}


def markdown(results: dict[str, Any], run: Run) -> str:
    return report.markdown(results)

"""The policy section's figures: the API server's histogram of policy checks, read
before and after a run, and the runs with the policy against those without it."""

from __future__ import annotations

from bench.metrics import Samples
from bench.policy.latency import PolicyChecks, policy_checks
from bench.policy.summary import summarise

FAMILY = "apiserver_admission_controller_admission_duration_seconds"
VAP = 'name="ValidatingAdmissionPolicy",type="validate"'
MAP = 'name="MutatingAdmissionPolicy",type="admit"'
METRICS = "\n".join([
    f"# HELP {FAMILY} [STABLE] Admission controller latency histogram in seconds",
    f"# TYPE {FAMILY} histogram",
    f'{FAMILY}_bucket{{{VAP},operation="CREATE",rejected="false",le="0.005"}} 390',
    f'{FAMILY}_bucket{{{VAP},operation="CREATE",rejected="false",le="+Inf"}} 400',
    f'{FAMILY}_sum{{{VAP},operation="CREATE",rejected="false"}} 0.8',
    f'{FAMILY}_count{{{VAP},operation="CREATE",rejected="false"}} 400',
    f'{FAMILY}_sum{{{VAP},operation="UPDATE",rejected="true"}} 0.2',
    f'{FAMILY}_count{{{VAP},operation="UPDATE",rejected="true"}} 100',
    f'{FAMILY}_sum{{{MAP},operation="CREATE",rejected="false"}} 9.0',
    f'{FAMILY}_count{{{MAP},operation="CREATE",rejected="false"}} 900',
    "# TYPE apiserver_request_total counter",
    'apiserver_request_total{code="200",verb="GET"} 7', ""])


def test_every_check_of_the_plugin_counts_whatever_its_outcome() -> None:
    checks = policy_checks(METRICS)
    assert checks == PolicyChecks(500, 1.0)
    assert checks.mean_ms == 2.0
    assert (checks - PolicyChecks(100, 0.5)).count == 400
    assert policy_checks("") == PolicyChecks() and PolicyChecks().mean_ms == 0.0


def test_with_the_policy_against_without_it_pair_by_pair() -> None:
    samples = Samples()
    for with_s, without_s in ((11.0, 10.0), (12.0, 10.0), (30.0, 10.0)):
        samples.add("with_policy_install_s", with_s)
        samples.add("without_policy_install_s", without_s)
    figures = summarise(samples)
    assert figures["with_policy_install_s_vs_without"] == 1.2  # the pairs' median
    assert figures["with_policy_preview_s_vs_without"] is None  # not measured

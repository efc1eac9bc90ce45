"""The lab's spoke role and policy cover the Knative Operator's own release files too:
the parity tests install those."""

from __future__ import annotations

import json
from pathlib import Path

from lab.clusters import AGGREGATOR_ROUTING, EGRESS_FLAG, NO_WEBHOOK_ADMISSION
from lab.handle import Cluster, Lab, wrong_mode
from lab.paths import lab_dir
from lab.spoke_role import SCRATCH_PREFIX, kodata_versions, lab_role_documents


def test_the_newest_pair_of_one_minor_in_the_kodata(tmp_path: Path) -> None:
    for component, version in (("knative-serving", "1.20.3"), ("knative-serving", "1.21.1"),
                               ("knative-serving", "1.21.10"), ("knative-eventing", "1.20.1"),
                               ("knative-eventing", "1.21.0")):
        (tmp_path / component / version).mkdir(parents=True)
    assert kodata_versions(tmp_path) == [("1.21.10", "1.21.0")]


def test_the_lab_api_servers_keep_admission_policies_on() -> None:
    """Without Knative's webhooks, a lab skips webhook admission (no webhook pod runs on a
    fake node); the plugin that enforces the spoke identity's ValidatingAdmissionPolicy
    stays on."""
    flag, _, plugins = NO_WEBHOOK_ADMISSION.partition("=disable-admission-plugins=")
    assert flag == "kube-apiserver"
    assert set(plugins.split(",")) == {"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"}


def test_a_webhook_lab_keeps_every_admission_plugin_on() -> None:
    """With Knative's webhooks (`lab up --webhooks`), webhook admission is on (the webhooks
    answer through the lab's egress): the apiservers disable no admission plugin."""
    assert AGGREGATOR_ROUTING == "kube-apiserver=enable-aggregator-routing=true"
    assert EGRESS_FLAG == "kube-apiserver=egress-selector-config-file="
    assert not any("admission-plugins" in flag for flag in (AGGREGATOR_ROUTING, EGRESS_FLAG))


def test_the_suite_refuses_a_lab_without_knatives_webhooks(tmp_path: Path) -> None:
    """A lone `pytest` after `make demo` would otherwise run every end-to-end module on the
    demo's lab, which skips webhook admission."""
    lab = Lab(hub=Cluster("hub", ""), spokes=(), provider_file="", bin=tmp_path, raw={},
              dir=lab_dir(tmp_path))
    problem = wrong_mode(lab)
    assert "runs without Knative's webhooks" in problem
    assert f"python -m lab --dir {tmp_path} down" in problem
    lab.dir.webhooks.mkdir(parents=True)
    (lab.dir.webhooks / "enabled").touch()
    assert wrong_mode(lab) == ""


def test_no_label_lifts_the_lab_policy() -> None:
    """The lab's policy leaves out scratch namespaces by name, never by a label the
    identity could write; its binding selects nothing."""
    docs = lab_role_documents("knative-fleet-spoke", "kube-system")
    policy, binding = docs[0], docs[1]
    assert "matchResources" not in binding["spec"]
    (scratch,) = [c for c in policy["spec"]["matchConditions"]
                  if c["name"] == "not-a-lab-scratch-namespace"]
    assert f'startsWith("{SCRATCH_PREFIX}")' in scratch["expression"]
    assert 'request.resource.resource == "namespaces"' in scratch["expression"]
    assert "label" not in json.dumps(policy["spec"]["matchConstraints"])

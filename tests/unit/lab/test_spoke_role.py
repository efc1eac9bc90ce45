"""The lab's spoke role and policy cover the Knative Operator's own release files too:
the parity tests install those."""

from __future__ import annotations

from pathlib import Path

from lab.clusters import NO_WEBHOOK_ADMISSION
from lab.spoke_role import kodata_versions


def test_the_newest_pair_of_one_minor_in_the_kodata(tmp_path: Path) -> None:
    for component, version in (("knative-serving", "1.20.3"), ("knative-serving", "1.21.1"),
                               ("knative-serving", "1.21.10"), ("knative-eventing", "1.20.1"),
                               ("knative-eventing", "1.21.0")):
        (tmp_path / component / version).mkdir(parents=True)
    assert kodata_versions(tmp_path) == [("1.21.10", "1.21.0")]


def test_the_lab_api_servers_keep_admission_policies_on() -> None:
    """Webhook admission is off in the lab (no webhook pod runs on a fake node); the
    plugin that enforces the spoke identity's ValidatingAdmissionPolicy must stay on."""
    flag, _, plugins = NO_WEBHOOK_ADMISSION.partition("=disable-admission-plugins=")
    assert flag == "kube-apiserver"
    assert set(plugins.split(",")) == {"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"}

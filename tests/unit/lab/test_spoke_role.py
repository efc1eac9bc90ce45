"""The lab's spoke role and policy cover the Knative Operator's own release files too:
the parity tests install those."""

from __future__ import annotations

from pathlib import Path

from lab.clusters import AGGREGATOR_ROUTING, EGRESS_FLAG
from lab.spoke_role import kodata_versions


def test_the_newest_pair_of_one_minor_in_the_kodata(tmp_path: Path) -> None:
    for component, version in (("knative-serving", "1.20.3"), ("knative-serving", "1.21.1"),
                               ("knative-serving", "1.21.10"), ("knative-eventing", "1.20.1"),
                               ("knative-eventing", "1.21.0")):
        (tmp_path / component / version).mkdir(parents=True)
    assert kodata_versions(tmp_path) == [("1.21.10", "1.21.0")]


def test_the_lab_api_servers_keep_every_admission_plugin_on() -> None:
    """Webhook admission is on (Knative's webhooks answer through the lab's egress), as is
    the plugin that enforces the spoke identity's ValidatingAdmissionPolicy: the lab's
    apiservers disable no admission plugin."""
    assert AGGREGATOR_ROUTING == "kube-apiserver=enable-aggregator-routing=true"
    assert EGRESS_FLAG == "kube-apiserver=egress-selector-config-file="
    assert not any("admission-plugins" in flag for flag in (AGGREGATOR_ROUTING, EGRESS_FLAG))

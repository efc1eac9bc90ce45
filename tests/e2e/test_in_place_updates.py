"""A change to a release ConfigMap or Secret is an update in place: the preview says
`update`, never `replace`, and during `pulumi up` a watch on the install's ConfigMaps
and Secrets sees no object deleted and every uid kept (the Knative controllers watch
these objects; a delete-and-create shows them their configuration gone)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from tests.support.fleet import module_stack
from tests.support.watch import Recorded, recording

pytestmark = pytest.mark.e2e
NAMESPACES = ["knative-serving", "knative-eventing"]
REPLACING = {"replace", "create-replacement", "delete-replaced"}


@pytest.fixture(scope="module")
def stack(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetStack]:
    with module_stack(lab, "inplace", tmp_path_factory.mktemp("state"),
                      [entry("spoke-1", serving="1.22", eventing="1.22")]) as st:
        yield st


def uids(api: client.ApiClient) -> dict[tuple[str, str, str], str]:
    core = client.CoreV1Api(api)
    out = {}
    for ns in NAMESPACES:
        for cm in core.list_namespaced_config_map(ns).items:
            out[("ConfigMap", ns, cm.metadata.name)] = cm.metadata.uid
        for secret in core.list_namespaced_secret(ns).items:
            out[("Secret", ns, secret.metadata.name)] = secret.metadata.uid
    return out


def up_watched(stack: FleetStack, api: client.ApiClient) -> tuple[Recorded, dict, dict]:
    before = uids(api)
    with recording(api, NAMESPACES) as rec:
        res = stack.up()
    assert res.ok, res.why
    return rec, before, uids(api)


def steps_for(steps: list[dict], kind: str, name: str) -> set[str]:
    return {s["op"] for s in steps
            if s["urn"].endswith(f"::{name}") and f":{kind}::" in s["urn"]}


def configured(stack: FleetStack, version: str) -> list[dict]:
    """Both components at `version` with one `config` key set; the preview's steps."""
    fleet = [entry("spoke-1", serving=version, eventing=version)]
    fleet[0]["serving"]["config"] = {"defaults": {"revision-timeout-seconds": "123"}}
    stack.configure(fleet)
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    return steps


def test_config_change_updates_the_configmap_in_place(lab: Lab, stack: FleetStack) -> None:
    api = lab.spokes[0].api()
    steps = configured(stack, "1.22")
    ops = steps_for(steps, "ConfigMap", "spoke-1:knative-serving/config-defaults")
    assert ops == {"update"}, ops
    assert not [s for s in steps if s["op"] in REPLACING], "a replace in the preview"
    rec, before, after = up_watched(stack, api)
    assert rec.deleted() == [], rec.deleted()
    assert after == before
    data = client.CoreV1Api(api).read_namespaced_config_map(
        "config-defaults", "knative-serving").data
    assert data["revision-timeout-seconds"] == "123"


def test_upgrade_keeps_every_configmap_and_secret(lab: Lab, stack: FleetStack) -> None:
    api = lab.spokes[0].api()
    steps = configured(stack, "1.23")
    updated = {s["urn"] for s in steps if s["op"] == "update" and ":ConfigMap::" in s["urn"]}
    assert updated, "the upgrade changes no ConfigMap: the test would prove nothing"
    replaced = [s["urn"] for s in steps if s["op"] in REPLACING
                and (":ConfigMap::" in s["urn"] or ":Secret::" in s["urn"])]
    assert replaced == []
    rec, before, after = up_watched(stack, api)
    assert rec.deleted() == [], rec.deleted()
    kept = {k: v for k, v in after.items() if k in before}
    assert kept == {k: v for k, v in before.items() if k in after}
    assert stack.outputs()["spokes"]["spoke-1"]["serving"] == "1.23.0"

"""The hand-over's state filter on an exported state shaped as this program writes it:
stack A forgets one spoke entirely (its component, everything under it, every
reference to it, its membership entry) and keeps everything else as it was."""

from __future__ import annotations

import copy
import json

import pytest

from operations.hand_over import (
    HandOverRefused,
    record_annotations,
    record_refusal,
    spoke_profile,
    without_spoke,
)
from ownership.identity import StackIdentity
from ownership.records import Record

STACK = "urn:pulumi:a::knative-fleet::"
PY_PROVIDER = f"{STACK}pulumi:providers:pulumi-python::default"
MEMBERSHIP = f"{STACK}pulumi-python:dynamic/knative-fleet:FleetMembership::fleet-membership"
SERVING_ANCHOR = "knativeserving-knative-serving-root-owner"
SECRET_SIG = "4dabf18193072939515e22adb298388d"  # how an export marks a secret value


def spoke_urn(spoke: str) -> str:
    return f"{STACK}knative-fleet:index:Spoke::{spoke}"


def child(spoke: str, type_: str, name: str) -> str:
    return f"{STACK}knative-fleet:index:Spoke${type_}::{name}"


def spoke_resources(spoke: str, after: list[str]) -> list[dict]:
    """A Spoke as components/spoke.py registers it: its provider, the sweep, the
    namespace, the anchor and an owned Deployment."""
    k8s = child(spoke, "pulumi:providers:kubernetes", spoke)
    provider_ref = f"{k8s}::0b9f6d1e-provider-id"
    sweep = child(spoke, "pulumi-python:dynamic/knative-fleet:AggregatedRoleSweep",
                  f"{spoke}:aggregated-clusterroles")
    ns = child(spoke, "kubernetes:core/v1:Namespace", f"{spoke}:knative-serving")
    anchor = child(spoke, "kubernetes:core/v1:ConfigMap",
                   f"{spoke}:knative-serving/{SERVING_ANCHOR}")
    deploy = child(spoke, "kubernetes:apps/v1:Deployment", f"{spoke}:knative-serving/activator")
    return [
        {"urn": spoke_urn(spoke), "custom": False, "type": "knative-fleet:index:Spoke",
         "parent": f"{STACK}pulumi:pulumi:Stack::knative-fleet-a",
         "outputs": {"ready": True}},
        {"urn": k8s, "custom": True, "id": "0b9f6d1e-provider-id",
         "type": "pulumi:providers:kubernetes", "parent": spoke_urn(spoke),
         "dependencies": after, "propertyDependencies": {"kubeconfig": []},
         "inputs": {"clusterIdentifier": f"clusterprofile/fleet-system/{spoke}",
                    "kubeconfig": {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270",
                                   "ciphertext": "v1:abc"}}},
        {"urn": sweep, "custom": True, "id": "sweep", "parent": spoke_urn(spoke),
         "type": "pulumi-python:dynamic/knative-fleet:AggregatedRoleSweep",
         "provider": f"{PY_PROVIDER}::4a3b", "dependencies": after},
        {"urn": ns, "custom": True, "id": "knative-serving", "parent": spoke_urn(spoke),
         "type": "kubernetes:core/v1:Namespace", "provider": provider_ref,
         "dependencies": after},
        {"urn": anchor, "custom": True, "id": f"knative-serving/{SERVING_ANCHOR}",
         "type": "kubernetes:core/v1:ConfigMap", "parent": spoke_urn(spoke),
         "provider": provider_ref, "dependencies": [ns],
         "propertyDependencies": {"metadata": [ns]}},
        {"urn": deploy, "custom": True, "id": "knative-serving/activator",
         "type": "kubernetes:apps/v1:Deployment", "parent": spoke_urn(spoke),
         "provider": provider_ref, "dependencies": [anchor],
         "propertyDependencies": {"metadata": [anchor]}, "deletedWith": anchor},
    ]


def exported() -> dict:
    """Stack `a` with spoke-1 (wave 1, then its gate) and spoke-2 (wave 2, after it)."""
    gate = f"{STACK}pulumi-python:dynamic/knative-fleet:WaveGate::wave-first-1"
    first = spoke_resources("spoke-1", [MEMBERSHIP])
    second = spoke_resources("spoke-2", [gate])
    spoke_1_objects = [r["urn"] for r in first if r.get("custom")]
    return {"version": 3, "deployment": {
        "manifest": {"time": "2026-11-26T10:00:00Z", "magic": "x", "version": "v3.259.0"},
        "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:salt"}},
        "resources": [
            {"urn": f"{STACK}pulumi:pulumi:Stack::knative-fleet-a", "custom": False,
             "type": "pulumi:pulumi:Stack", "outputs": {"spokes": {"spoke-1": {}, "spoke-2": {}}}},
            {"urn": PY_PROVIDER, "custom": True, "id": "4a3b",
             "type": "pulumi:providers:pulumi-python"},
            {"urn": MEMBERSHIP, "custom": True, "id": "fleet-membership",
             "type": "pulumi-python:dynamic/knative-fleet:FleetMembership",
             "provider": f"{PY_PROVIDER}::4a3b",
             "inputs": {"spokes": {"spoke-1": {"group": "g", "profile": "fleet-system/spoke-1"},
                                   "spoke-2": {"group": "g", "profile": "fleet-system/spoke-2"}},
                        "groups": {"g": {"namespace": "fleet-system"}}},
             "outputs": {"spokes": {"spoke-1": {"group": "g", "profile": "fleet-system/spoke-1"},
                                    "spoke-2": {"group": "g", "profile": "fleet-system/spoke-2"}},
                         "groups": {"g": {"namespace": "fleet-system"}}}},
            *first,
            {"urn": gate, "custom": True, "id": "gate",
             "type": "pulumi-python:dynamic/knative-fleet:WaveGate",
             "provider": f"{PY_PROVIDER}::4a3b", "dependencies": spoke_1_objects,
             "propertyDependencies": {"changes": spoke_1_objects, "wave": []}},
            *second,
        ],
        "pending_operations": [{"type": "creating", "resource": {"urn": first[-1]["urn"]}}],
    }}


def urns(export: dict) -> list[str]:
    return [r["urn"] for r in export["deployment"]["resources"]]


def test_the_spoke_and_everything_under_it_go_and_nothing_else() -> None:
    before = exported()
    after, dropped = without_spoke(before, "spoke-1")
    assert dropped == {r["urn"] for r in spoke_resources("spoke-1", [])}
    assert urns(after) == [u for u in urns(before) if u not in dropped]
    assert not any("spoke-1" in u for u in urns(after))
    # spoke-2 is kept exactly, secrets (ciphertext) included.
    assert [r for r in after["deployment"]["resources"] if "spoke-2" in r["urn"]] == \
        spoke_resources("spoke-2", [f"{STACK}pulumi-python:dynamic/knative-fleet:WaveGate"
                                    "::wave-first-1"])
    assert after["deployment"]["secrets_providers"] == before["deployment"]["secrets_providers"]
    assert after["deployment"]["pending_operations"] == []
    assert before == exported()  # the export itself is left as it was (the backup)


def test_no_reference_to_a_dropped_resource_is_left() -> None:
    after, dropped = without_spoke(exported(), "spoke-1")
    text = json.dumps(after)
    assert not any(u in text for u in dropped)
    gate = next(r for r in after["deployment"]["resources"] if "WaveGate" in r["urn"])
    assert gate["dependencies"] == [] and gate["propertyDependencies"] == {
        "changes": [], "wave": []}


def test_the_membership_record_forgets_the_spoke() -> None:
    after, _ = without_spoke(exported(), "spoke-1")
    membership = next(r for r in after["deployment"]["resources"] if r["urn"] == MEMBERSHIP)
    for side in ("inputs", "outputs"):
        assert list(membership[side]["spokes"]) == ["spoke-2"]
        assert membership[side]["groups"] == {"g": {"namespace": "fleet-system"}}


def test_a_spoke_the_state_does_not_hold_changes_nothing() -> None:
    before = exported()
    before["deployment"]["pending_operations"] = []
    after, dropped = without_spoke(before, "spoke-9")
    assert dropped == set() and after == before


def test_a_name_is_matched_whole() -> None:
    export = exported()
    export["deployment"]["resources"] += spoke_resources("spoke-10", [])
    _, dropped = without_spoke(export, "spoke-1")
    assert not any("spoke-10" in u for u in dropped)


def test_a_resource_outside_the_component_that_uses_its_provider_is_refused() -> None:
    export = exported()
    stray = copy.deepcopy(export["deployment"]["resources"][-1])
    stray.update(urn=f"{STACK}kubernetes:core/v1:ConfigMap::stray", parent=None,
                 provider=spoke_resources("spoke-1", [])[3]["provider"])
    export["deployment"]["resources"].append(stray)
    with pytest.raises(HandOverRefused, match="spoke 'spoke-1'.*nothing was changed"):
        without_spoke(export, "spoke-1")


def test_the_profile_comes_from_the_membership_else_the_provider() -> None:
    export = exported()
    assert spoke_profile(export, "spoke-2") == ("fleet-system", "spoke-2")
    for r in export["deployment"]["resources"]:
        if r["urn"] == MEMBERSHIP:
            r["inputs"]["spokes"] = {}
    assert spoke_profile(export, "spoke-2") == ("fleet-system", "spoke-2")
    assert spoke_profile(export, "spoke-9") is None


A, B, C = (StackIdentity(f"kf-{n * 32}", f"o/p/{n}@file:///s") for n in "abc")


def rec(owner: StackIdentity | None) -> Record | None:
    return None if owner is None else Record(owner.id, owner.name)


@pytest.mark.parametrize(("records", "in_state", "refused"), [
    ({"ns/x": A}, True, False),
    ({"ns/x": None, "ns/y": A}, True, False),
    ({}, True, False),
    ({"ns/x": C}, True, True),
    ({"ns/x": A, "ns/y": C}, True, True),
    ({"ns/x": B}, True, True),  # B's record while A still holds it: not a move we made
    ({"ns/x": B}, False, False),  # finishing a move whose record step failed half way
    ({"ns/x": A}, False, False),  # the state moved, no record written yet: run again
    ({"ns/x": A, "ns/y": B}, False, False),  # one record of two written: run again
    ({"ns/x": None, "ns/y": B}, False, False),
    ({"ns/x": B, "ns/y": C}, False, True),  # a third stack's record: never finished over it
    ({"ns/x": C}, False, True),
])
def test_the_record_must_name_the_giving_stack_or_nobody(
        records: dict, in_state: bool, refused: bool) -> None:
    why = record_refusal("s", {k: rec(v) for k, v in records.items()}, A, B, in_state)
    assert (why is not None) is refused
    if why:
        assert why.startswith("spoke 's': its owner record names stack ")
        assert "not o/p/a; nothing was changed. Fix: hand it over from the stack its " \
            "record names (--from-stack)" in why
        assert "nothing was changed. Fix:" in why


def test_the_record_for_a_stack_without_an_id_names_it_alone() -> None:
    """Its first run adopts the install by name and writes its id then."""
    assert record_annotations(StackIdentity("", "o/p/new@file:///s", saved=False)) == {
        "knative-fleet.dev/owner-id": None, "knative-fleet.dev/owner": "o/p/new@file:///s"}
    assert record_annotations(B) == {"knative-fleet.dev/owner-id": B.id,
                                     "knative-fleet.dev/owner": B.name}

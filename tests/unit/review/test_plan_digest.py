"""The review's planned steps and their digest: stable for the same preview, blind to
values known only at apply and to the providers' credentials, and every difference a
later preview plans is named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from review.plan_digest import (
    UNKNOWN,
    differences,
    plan_digest,
    plan_json,
    planned_steps,
    steps_of,
)

PREVIEWS = Path(__file__).resolve().parents[2] / "support" / "previews"
CM = ("urn:pulumi:s::knative-fleet::knative-fleet:index:Spoke$kubernetes:core/v1:"
      "ConfigMap::spoke-1:knative-serving/config-autoscaler")


def recorded(name: str) -> dict:
    return json.loads(gzip.decompress((PREVIEWS / f"{name}.json.gz").read_bytes()))


def step(op: str, urn: str = CM, **inputs: object) -> dict:
    return {"op": op, "urn": urn, "newState": {"inputs": inputs}}


def test_a_recorded_preview_gives_the_same_digest_twice_and_skips_unchanged_steps():
    doc = recorded("config-change")
    steps = planned_steps(doc)
    assert steps and all(s.op != "same" for s in steps)
    assert plan_digest(steps) == plan_digest(planned_steps(recorded("config-change")))
    assert plan_digest(steps) != plan_digest(planned_steps(recorded("upgrade")))
    assert steps_of(json.loads(json.dumps(plan_json(doc)))) == steps


def test_a_noop_preview_plans_nothing():
    assert planned_steps(recorded("noop")) == []


def test_a_value_known_only_at_apply_is_the_same_on_both_sides():
    a = planned_steps({"steps": [step("update", data={"uid": UNKNOWN})]})
    b = planned_steps({"steps": [step("update", data={"uid": UNKNOWN})]})
    assert a == b


def test_provider_steps_are_left_out():
    provider = ("urn:pulumi:s::knative-fleet::knative-fleet:index:Spoke$pulumi:providers:"
                "kubernetes::spoke-1")
    assert planned_steps({"steps": [step("update", provider, kubeconfig="[secret]")]}) == []


def test_another_value_for_the_same_key_is_named():
    reviewed = planned_steps({"steps": [step("update", data={"enable-scale-to-zero": "false"})]})
    fresh = planned_steps({"steps": [step("update", data={"enable-scale-to-zero": "true"})]})
    assert plan_digest(reviewed) != plan_digest(fresh)
    assert differences(reviewed, fresh) == [
        "planned with other values than reviewed: update kubernetes:core/v1:ConfigMap "
        "spoke-1:knative-serving/config-autoscaler"]


def test_added_and_dropped_steps_are_named():
    other = CM.replace("config-autoscaler", "config-network")
    reviewed = planned_steps({"steps": [step("update")]})
    fresh = planned_steps({"steps": [step("create", other), {"op": "delete", "urn": CM}]})
    assert differences(reviewed, fresh) == [
        "not reviewed: create kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-network",
        "not reviewed: delete kubernetes:core/v1:ConfigMap "
        "spoke-1:knative-serving/config-autoscaler",
        "reviewed, no longer planned: update kubernetes:core/v1:ConfigMap "
        "spoke-1:knative-serving/config-autoscaler"]

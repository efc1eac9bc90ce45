"""A wave gate's `changes`, offline, moves as a live preview's does: with a created or
replaced object, or an update of any kind but a ConfigMap or Secret (whose preview keeps
its uid and resourceVersion), never with a dynamic resource or a provider."""

from __future__ import annotations

import pytest

from review.offline.preview import _moves_gate

SPOKE = "urn:pulumi:s::knative-fleet::knative-fleet:index:Spoke$"


@pytest.mark.parametrize(("op", "type_", "moves"), [
    ("update", "kubernetes:core/v1:ConfigMap", False),
    ("update", "kubernetes:core/v1:Secret", False),
    ("update", "kubernetes:apps/v1:Deployment", True),
    ("update", "kubernetes:autoscaling/v2:HorizontalPodAutoscaler", True),
    ("create", "kubernetes:core/v1:ConfigMap", True),
    ("replace", "kubernetes:batch/v1:Job", True),
    ("same", "kubernetes:apps/v1:Deployment", False),
    ("delete", "kubernetes:apps/v1:Deployment", False),
    ("update", "pulumi:providers:kubernetes", False),
    ("create", "pulumi-python:dynamic/knative-fleet:AggregatedRoleGuard", False),
])
def test_what_moves_a_wave_gate(op: str, type_: str, moves: bool) -> None:
    assert _moves_gate({"op": op, "urn": f"{SPOKE}{type_}::spoke-1:x"}) is moves

"""What one spoke plans: one plan per component named, the version step per component,
and the spec applied through the transform index."""

from __future__ import annotations

import pytest

from core.errors import TransformError
from knative import plan as planning
from knative.objects import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from knative.spec.component import EventingSpec, ServingSpec
from tests.support.releases import RELEASE_BASE as BASE
from tests.support.releases import serving


def test_version_step_check_runs_per_component() -> None:
    with pytest.raises(TransformError, match="eventing runs 1.21.0"):
        planning.plan_spoke(ServingSpec(version="1.23"), EventingSpec(version="1.23"), BASE,
                            {}, {"knative-eventing": "1.21.0", "knative-serving": "1.22.1"})


def test_one_plan_per_component_named() -> None:
    assert [p.component for p in planning.plan_spoke(ServingSpec(), EventingSpec(), BASE,
                                                     {})] == ["serving", "eventing"]
    assert [p.component for p in planning.plan_spoke(None, EventingSpec(), BASE, {})] == [
        "eventing"]
    assert planning.plan_spoke(None, None, BASE, {}) == []


def test_an_existing_namespace_is_ours_only_with_our_label() -> None:
    ours = {"knative-serving": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}
    (plan,) = planning.plan_spoke(ServingSpec(), None, BASE, ours)
    assert plan.namespace_object is not None
    (plan,) = planning.plan_spoke(ServingSpec(), None, BASE, {"knative-serving": {}})
    assert plan.namespace_object is None


def test_customize_runs_every_transform_of_the_index_in_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def recorder(name: str):
        def transform(rendered, spec):
            calls.append(name)
            return rendered
        return transform

    monkeypatch.setattr(planning, "TRANSFORMS", (recorder("a"), recorder("b"), recorder("c")))
    rendered = serving()
    assert planning.customize(rendered, ServingSpec()) is rendered
    assert calls == ["a", "b", "c"]

"""`version` and `allowMinorSkip`: the one-minor-step rule (operator parity:
IsVersionValidMigrationEligible in pkg/reconciler/common/releases.go)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from knative.version_step import check_version_step
from models.component import ServingSpec
from tests.support.releases import serving_plan


@pytest.mark.parametrize(("installed", "target"), [
    (None, "1.23"), ("1.22.1", "1.23"), ("1.23.0", "1.22"), ("1.23.0", "1.23.0")])
def test_one_minor_step_or_none_is_allowed(installed: str | None, target: str) -> None:
    assert serving_plan(installed, version=target).version.startswith(target)


@pytest.mark.parametrize(("installed", "target", "word"), [
    ("1.21.0", "1.23", "upgrade"), ("1.25.3", "1.23", "downgrade"),
    ("0.23.0", "1.23", "upgrade")])
def test_more_than_one_minor_step_is_refused_with_the_way_forward(
        installed: str, target: str, word: str) -> None:
    with pytest.raises(TransformError) as err:
        serving_plan(installed, version=target)
    message = str(err.value)
    assert installed in message and word in message and "allowMinorSkip" in message


def test_an_entry_may_accept_a_bigger_step() -> None:
    plan = serving_plan("1.21.0", version="1.23", allowMinorSkip=True)
    assert plan.version == "1.23.0"




@pytest.mark.parametrize("version", ["1.23", "1.23.0", "2.0"])
def test_version_shapes_accepted(version: str) -> None:
    assert ServingSpec(version=version).version == version


@pytest.mark.parametrize("version", ["latest", "v1.23", "1", "1.23.0.1", "1.x"])
def test_other_version_shapes_are_refused(version: str) -> None:
    with pytest.raises(ValidationError, match="must look like"):
        ServingSpec(version=version)


def test_the_step_check_alone() -> None:
    check_version_step("eventing", None, "1.23.0", allow_minor_skip=False)
    check_version_step("eventing", "1.20.0", "1.23.0", allow_minor_skip=True)
    with pytest.raises(TransformError, match=r"eventing runs 1.21.0.*\(e.g. 1.22 first\)"):
        check_version_step("eventing", "1.21.0", "1.23.0", allow_minor_skip=False)

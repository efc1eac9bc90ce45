"""The error tree and how validation problems are worded."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from core import errors
from core.problems import key_path, problem_lines
from core.reasons import Reason
from core.strict import Strict


def test_every_error_is_a_fleet_error_and_input_errors_stay_value_errors() -> None:
    leaves = [errors.FleetConfigError, errors.ProviderFileError, errors.ProfileError,
              errors.ResolutionError, errors.ReleaseError, errors.TransformError]
    assert all(issubclass(cls, errors.FleetError) for cls in leaves)
    for cls in (errors.FleetConfigError, errors.ProviderFileError, errors.ReleaseError,
                errors.TransformError):
        assert issubclass(cls, ValueError), cls
    assert issubclass(errors.ReleaseError, errors.PlanError)
    assert issubclass(errors.ProviderFileError, errors.ConfigError)


def test_every_error_class_is_drawn_in_the_tree() -> None:
    drawn = errors.__doc__ or ""
    defined = [name for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, Exception)]
    assert defined and all(name in drawn for name in defined), defined


def test_resolution_error_names_spoke_reason_and_fix_and_survives_pickling() -> None:
    err = errors.ResolutionError("spoke-a", Reason.CLUSTER_PROFILE_NOT_FOUND, "gone")
    text = str(err)
    assert text.startswith("spoke 'spoke-a': ClusterProfileNotFound: gone. Fix: ")
    assert str(pickle.loads(pickle.dumps(err))) == text


class _Inner(Strict):
    version: int


class _Outer(Strict):
    items: list[_Inner]


def test_problem_lines_give_the_key_path_as_written() -> None:
    with pytest.raises(ValidationError) as info:
        _Outer.model_validate({"items": [{"version": "x"}, {"version": 1, "typo": 1}]})
    lines = problem_lines(info.value, "knative-fleet:")
    assert any(line.startswith("knative-fleet:items[0].version: ") for line in lines), lines
    assert "knative-fleet:items[1].typo: unknown key (typo?)" in lines


def test_key_path_skips_validator_steps_and_names_the_top_level() -> None:
    assert key_path(("fleet", 0, "function-after", "name")) == "fleet[0].name"
    assert key_path(()) == "(top level)"

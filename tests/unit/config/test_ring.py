"""`knative-fleet:ring`: the stack's rollout ring for the fleet runner; optional, a
whole number from 1, and refused with its config path otherwise."""

from __future__ import annotations

import pytest

from config.fleet import DEFAULT_RING, parse_fleet_config
from core.errors import FleetConfigError


def test_ring_defaults_to_one() -> None:
    assert parse_fleet_config({}).ring == DEFAULT_RING == 1


@pytest.mark.parametrize("ring", [1, 2, 17])
def test_ring_is_kept(ring: int) -> None:
    assert parse_fleet_config({"ring": ring}).ring == ring


@pytest.mark.parametrize("ring", [0, -1, 1.5, 2.0, True, "2", "canary", None, [1]],
                         ids=["zero", "negative", "fraction", "float", "bool", "text",
                              "name", "null", "list"])
def test_ring_refused(ring: object) -> None:
    with pytest.raises(FleetConfigError) as err:
        parse_fleet_config({"ring": ring})
    assert "knative-fleet:ring" in str(err.value)

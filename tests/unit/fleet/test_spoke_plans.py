"""One selected spoke into its plan, without Pulumi: reached through the inventory with
the install namespaces, planned from the facts read there, and every failure kept as the
spoke's ResolutionError with its reason."""

from __future__ import annotations

import pytest

from access import Reason, SpokeFacts
from access.inventory import HubInventory
from core.errors import ReleaseError, TransformError
from fleet import plan_fleet
from fleet.spokes import INSTALL_NAMESPACES
from knative import plan as planning
from tests.support.factories import FakeInventory, spoke_connection, two_spoke_fleet


@pytest.fixture()
def cfg():
    return two_spoke_fleet()


def test_each_spoke_is_reached_with_the_install_namespaces_then_planned(cfg, monkeypatch):
    facts = SpokeFacts(namespaces={"knative-serving": {}}, installed={"knative-serving": "1.22.0"})
    planned: list[tuple] = []
    real = planning.plan_spoke

    def recording(*args):
        planned.append(args)
        return real(*args)

    monkeypatch.setattr(planning, "plan_spoke", recording)
    inventory = FakeInventory(facts={"a": facts})
    plan = plan_fleet(cfg, inventory)
    assert sorted(inventory.reached) == [("spoke-a", "f", "a", INSTALL_NAMESPACES),
                                         ("spoke-b", "f", "b", INSTALL_NAMESPACES)]
    spoke = plan.spokes["spoke-a"]
    assert spoke.error is None
    assert (spoke.connection, spoke.server_version) == (spoke_connection(), "v1.36.3")
    assert spoke.versions == {"serving": "1.23.0", "eventing": "1.23.0"}
    assert any(facts.namespaces in args and facts.installed in args for args in planned)
    assert spoke.condition["status"] == "True"


def test_a_spoke_that_does_not_resolve_is_not_planned(cfg, monkeypatch):
    monkeypatch.setattr(planning, "plan_spoke",
                        lambda *a: pytest.fail("an unreached spoke was planned"))
    plan = plan_fleet(cfg.model_copy(update={"fleet": cfg.fleet[:1]}),
                      FakeInventory(broken={"a": Reason.ACCESS_PROVIDER_FAILED}))
    spoke = plan.spokes["spoke-a"]
    assert spoke.install is None and spoke.connection is None
    assert (spoke.error.spoke, spoke.error.reason) == ("spoke-a", Reason.ACCESS_PROVIDER_FAILED)
    assert spoke.condition == {"status": "False", "reason": "AccessProviderFailed",
                               "message": "a is broken"}


@pytest.mark.parametrize(("exc", "reason"), [
    (ReleaseError("no release 1.23"), Reason.MANIFESTS_UNAVAILABLE),
    (TransformError("bad spec"), Reason.INVALID_SPEC),
])
def test_planning_errors_keep_their_reasons(cfg, monkeypatch, exc, reason):
    def fail(*_args):
        raise exc

    monkeypatch.setattr(planning, "plan_spoke", fail)
    plan = plan_fleet(cfg, FakeInventory())
    for name in ("spoke-a", "spoke-b"):
        error = plan.spokes[name].error
        assert error is not None and plan.spokes[name].install is None
        assert (error.spoke, error.reason, error.message) == (name, reason, str(exc))
    assert plan.failure is not None and "2 of 2 spokes could not be resolved" in plan.failure


def test_without_a_provider_file_the_hub_inventory_says_so(cfg, tmp_path):
    inventory = HubInventory(str(tmp_path / "no-such-kubeconfig"), None, None, 30.0)
    plan = plan_fleet(cfg, inventory)
    error = plan.spokes["spoke-b"].error
    assert error is not None
    assert (error.spoke, error.reason, error.message) == (
        "spoke-b", Reason.MULTICLUSTER_DISABLED,
        "no access-provider file is configured (knative-fleet:providerFile)")

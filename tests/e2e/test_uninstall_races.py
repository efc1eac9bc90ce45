"""Nothing live is left behind by an uninstall, also when the spoke's aggregation
controller races it: the aggregated ClusterRoles of Serving and Eventing are written
by the kube-controller-manager from its cache, and a late write after their delete
creates them anew.

Two proofs: a deterministic one (a watcher that re-applies every aggregated role of
the install right after its delete, as the controller does from a stale cache: with
the rules it last had, and with none, which leaves a role with no manager at all), and
a timing one (install -> destroy five times on both spokes, each destroy with three
busy processes per core and the spokes' own controller-managers at nice 19)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from tests.support.fleet import module_stack
from tests.support.load import loaded_machine
from tests.support.snapshot import kept_by_policy, snapshot
from tests.support.watch import stale_aggregation_controller

pytestmark = pytest.mark.e2e
CYCLES = 5
# Far below the provider's 10-minute delete timeout: a delete that waited on a
# re-created object would cross it.
DESTROY_CEILING_S = 300


@pytest.fixture(scope="module")
def stack(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetStack]:
    with module_stack(lab, "race", tmp_path_factory.mktemp("state")) as st:
        st.configure([entry("spoke-1"), entry("spoke-2")])
        yield st


@pytest.fixture(scope="module")
def before(lab: Lab) -> dict[str, set[tuple[str, str, str]]]:
    """What each spoke holds before the first install."""
    return {spoke.name: snapshot(spoke.api()) for spoke in lab.spokes}


def leaked(lab: Lab, before: dict) -> dict[str, list]:
    """Per spoke, every object the install left that was not there before it, other
    than what is kept on purpose (the CRDs and their APIServices)."""
    out = {}
    for spoke in lab.spokes:
        after = snapshot(spoke.api())
        extra = after - before[spoke.name] - kept_by_policy(after)
        missing = before[spoke.name] - after
        if extra or missing:
            out[spoke.name] = sorted(extra) + [("missing", *m) for m in sorted(missing)]
    return out


def install(stack: FleetStack) -> None:
    res = stack.up()
    assert res.ok, res.why


@pytest.mark.parametrize("emptied", [False, True], ids=["last-rules", "no-rules"])
def test_destroy_wins_against_a_stale_aggregation_controller(
        lab: Lab, stack: FleetStack, before: dict, emptied: bool) -> None:
    install(stack)
    with ExitStack() as watchers:
        recreated = [watchers.enter_context(stale_aggregation_controller(s.api(), emptied))
                     for s in lab.spokes]
        start = time.monotonic()
        res = stack.destroy()
        took = time.monotonic() - start
    assert res.ok, res.why
    # The watcher really re-created the roles: 7 aggregated roles per spoke.
    assert all(len(r.applied) >= 7 for r in recreated), [r.applied for r in recreated]
    assert took < DESTROY_CEILING_S, res.out
    assert leaked(lab, before) == {}


@pytest.mark.parametrize("cycle", range(1, CYCLES + 1))
def test_destroy_under_load_leaves_nothing(
        lab: Lab, stack: FleetStack, before: dict, cycle: int) -> None:
    install(stack)
    with loaded_machine(lab.kwok(), [s.name for s in lab.spokes]):
        res = stack.destroy()
    assert res.ok, f"cycle {cycle}: {res.out}"
    assert leaked(lab, before) == {}, f"cycle {cycle}"

"""The aggregated-role guard's and sweep's provider: the delete steps run by the names
old stack states hold (`components.aggregated_role_guard.settle_and_delete`, `.sweep`)
reach lifecycle.aggregated_roles; a failed step names the spoke and the way on; the
connection the guards hold survives the state; and the providers' modules load without
the Kubernetes client."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from access import spoke_client as spoke_access
from components import aggregated_role_guard as guard
from lab.paths import REPO
from lifecycle import aggregated_roles
from tests.support.factories import spoke_connection


@pytest.mark.parametrize("step", ["settle_and_delete", "sweep"])
def test_the_delete_steps_run_in_lifecycle(monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    ran: list[dict[str, Any]] = []
    monkeypatch.setattr(aggregated_roles, step, ran.append)
    provider = guard._Provider(getattr(guard, step))
    props = {"id": "agg", "role": "agg", "spoke": "spoke-1"}
    provider.delete("agg", props)
    assert ran == [props]


def test_a_failed_delete_names_the_spoke_and_the_way_on() -> None:
    def fails(_props: dict[str, Any]) -> None:
        raise TimeoutError("no answer")

    with pytest.raises(RuntimeError, match=r"^spoke 'spoke-1': could not remove agg "
                       r"safely: TimeoutError: no answer\. Fix: make sure the spoke"):
        guard._Provider(fails).delete("agg", {"role": "agg", "spoke": "spoke-1"})
    with pytest.raises(RuntimeError, match="could not remove the aggregated ClusterRoles"):
        guard._Provider(fails).delete("sweep", {"roles": ["agg"], "spoke": "spoke-1"})


def test_connection_survives_pulumi_dropping_unset_fields() -> None:
    conn = spoke_connection()
    props = {k: v for k, v in spoke_access.connection_props(conn).items() if v is not None}
    props["args"], props["env"] = list(conn.args), [list(p) for p in conn.env]
    assert spoke_access.connection_from_props(props) == conn


def test_the_dynamic_providers_load_without_the_kubernetes_client_or_config_models() -> None:
    """The engine starts the dynamic provider and unpickles these modules in its
    one-at-a-time step loop before a spoke's objects: what they import is on every
    preview's path."""
    code = ("import sys, components.aggregated_role_guard, components.membership, "
            "components.wave_gate; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'kubernetes', 'pydantic', 'access', 'knative'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "[]"

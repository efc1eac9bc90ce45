"""Which typed resources of objects a step now holds (CRDs, ClusterRoles,
ClusterRoleBindings) a run still registers: those an earlier release's state holds and
the engine would delete, read from `pulumi stack export`; none read when the last
outputs say `typedHeld` with every held type."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from components import held_typed as edge
from core.resource_types import CLUSTER_ROLE_BINDING_TYPE, CLUSTER_ROLE_TYPE
from fleet.held_typed import (
    CRD_TYPE,
    HELD_OUTPUT,
    HELD_TYPES,
    held,
    state_needs_reading,
    typed_deleted_with_state,
    typed_key,
)

URN = "urn:pulumi:prod::knative-fleet::knative-fleet:index:Spoke${}::{}"


def _crd(spoke: str, name: str, retain: bool | None, typ: str = CRD_TYPE) -> dict:
    res = {"urn": URN.format(typ, f"{spoke}:{name}"), "type": typ}
    if retain is not None:
        res["retainOnDelete"] = retain
    return res


EXPORT = {"version": 3, "deployment": {"resources": [
    {"urn": "urn:pulumi:prod::knative-fleet::pulumi:pulumi:Stack::knative-fleet-prod",
     "type": "pulumi:pulumi:Stack"},
    _crd("spoke-1", "services.serving.knative.dev", retain=True),
    _crd("spoke-1", "brokers.eventing.knative.dev", retain=None),
    _crd("spoke-2", "services.serving.knative.dev", retain=False),
    _crd("spoke-2", "knative-serving-admin", retain=None, typ=CLUSTER_ROLE_TYPE),
    # An aggregated ClusterRole: kept on delete (its guard deletes it), not held.
    _crd("spoke-2", "knative-serving-aggregated-addressable-resolver", retain=True,
         typ=CLUSTER_ROLE_TYPE),
    _crd("spoke-2", "knative-serving-controller-admin", retain=None,
         typ=CLUSTER_ROLE_BINDING_TYPE),
    {"urn": URN.format("kubernetes:core/v1:ConfigMap", "spoke-2:knative-serving/config"),
     "type": "kubernetes:core/v1:ConfigMap"},
]}}


def test_only_typed_held_the_engine_would_delete_are_kept() -> None:
    assert typed_deleted_with_state(EXPORT) == {
        "spoke-1": frozenset({typed_key(CRD_TYPE, "spoke-1:brokers.eventing.knative.dev")}),
        "spoke-2": frozenset({
            typed_key(CRD_TYPE, "spoke-2:services.serving.knative.dev"),
            typed_key(CLUSTER_ROLE_TYPE, "spoke-2:knative-serving-admin"),
            typed_key(CLUSTER_ROLE_BINDING_TYPE, "spoke-2:knative-serving-controller-admin")})}
    assert typed_deleted_with_state({"version": 3, "deployment": {}}) == {}
    assert typed_deleted_with_state({}) == {}


def test_the_last_outputs_say_whether_the_state_is_read() -> None:
    assert state_needs_reading({})  # a first run
    assert state_needs_reading({"ownerId": "kf-1"})  # an earlier release's outputs
    assert state_needs_reading({HELD_OUTPUT: False})
    # The last release's output said its typed CRDs alone were let go: its typed
    # ClusterRoles are still in the state.
    assert state_needs_reading({"crdsHeld": True})
    assert state_needs_reading({HELD_OUTPUT: [CRD_TYPE]})
    assert not state_needs_reading({HELD_OUTPUT: list(HELD_TYPES)})
    assert held(0) == list(HELD_TYPES)
    assert held(1) is False


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    cli = tmp_path / "pulumi"
    cli.write_text("#!/bin/sh\n" + script)
    cli.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")


def test_the_state_is_read_by_the_cli_on_path(tmp_path, monkeypatch) -> None:
    (tmp_path / "state.json").write_text(json.dumps(EXPORT))
    _cli(tmp_path, monkeypatch, f'echo "$@" > {tmp_path}/args\ncat {tmp_path}/state.json\n')
    monkeypatch.setattr(edge, "stack_name", lambda: "organization/knative-fleet/prod")
    got = edge.typed_to_register({"ownerId": "kf-1"})
    assert got == typed_deleted_with_state(EXPORT)
    assert (tmp_path / "args").read_text().split() == [
        "stack", "export", "--stack", "organization/knative-fleet/prod"]


def test_outputs_that_say_every_type_held_read_no_state(tmp_path, monkeypatch) -> None:
    _cli(tmp_path, monkeypatch, "exit 3\n")
    assert edge.typed_to_register({HELD_OUTPUT: list(HELD_TYPES)}) == {}


@pytest.mark.parametrize("script, why", [
    ("echo 'error: failed to load checkpoint: access denied' >&2; exit 255\n",
     "error: failed to load checkpoint: access denied"),
    ("echo '[1, 2]'\n", "it is not a JSON object"),
    ("echo '{not json'\n", "JSONDecodeError"),
])
def test_a_state_that_cannot_be_read_stops_the_run_naming_the_fix(
        tmp_path, monkeypatch, script, why) -> None:
    monkeypatch.setattr(edge, "RETRY_PAUSE_S", 0.0)
    _cli(tmp_path, monkeypatch, script)
    with pytest.raises(edge.StateUnreadable) as got:
        edge.read_state("organization/knative-fleet/prod")
    text = str(got.value)
    assert why in text
    assert "stopped before changing anything" in text
    assert "Fix: make `pulumi stack export --stack organization/knative-fleet/prod` work" in text


def test_a_read_that_meets_a_checkpoint_write_is_read_again(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(edge, "RETRY_PAUSE_S", 0.0)
    (tmp_path / "state.json").write_text(json.dumps(EXPORT))
    _cli(tmp_path, monkeypatch, f"""if [ ! -e {tmp_path}/seen ]; then touch {tmp_path}/seen
echo 'error: failed to load checkpoint: EOF' >&2; exit 255; fi
cat {tmp_path}/state.json
""")
    assert edge.read_state("organization/knative-fleet/prod") == EXPORT


def test_a_cli_that_hangs_is_a_state_that_cannot_be_read(monkeypatch) -> None:
    def hang(*_a, **_k):
        raise subprocess.TimeoutExpired(["pulumi"], edge.EXPORT_TIMEOUT_S)

    monkeypatch.setattr(edge.subprocess, "run", hang)
    monkeypatch.setattr(edge, "RETRY_PAUSE_S", 0.0)
    with pytest.raises(edge.StateUnreadable, match="TimeoutExpired"):
        edge.read_state("organization/knative-fleet/prod")

"""The offline inventory answers the planner from a ClusterProfile snapshot and the
last state, and contacts nothing."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from access import SpokeFacts
from core.errors import ProfileError, ResolutionError
from lab.paths import REPO
from review.offline.inventory import UNKNOWN_VERSION, OfflineInventory, facts_from_state
from review.offline.profiles import ProfileSnapshot, snapshot_of
from review.offline.state import HIDDEN, LastState, reveal

FIXTURES = REPO / "tests" / "support" / "offline"
INSTALL = ("knative-serving", "knative-eventing")


@pytest.fixture(scope="module")
def state() -> LastState:
    return LastState.load(FIXTURES / "state-1.22.json.gz")


@pytest.fixture(scope="module")
def snapshot() -> ProfileSnapshot:
    return ProfileSnapshot.load(FIXTURES / "profiles.json")


@pytest.fixture
def providers(tmp_path: Path) -> str:
    path = tmp_path / "providers.json"
    path.write_text(json.dumps({"providers": [{"name": "secretreader", "execConfig": {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": str(tmp_path / "never-run"), "provideClusterInfo": True}}]}))
    return str(path)


def test_facts_come_from_the_spokes_objects_in_the_state(state: LastState) -> None:
    facts = facts_from_state("spoke-1", state, state.spokes_output["spoke-1"], INSTALL)
    assert facts.installed == {"knative-serving": "1.22.1", "knative-eventing": "1.22.2"}
    assert set(facts.namespaces) == set(INSTALL)
    assert facts.namespaces["knative-serving"]["app.kubernetes.io/managed-by"] == "knative-fleet"
    assert facts.rules is None


def test_a_spoke_new_to_the_state_has_nothing_installed(state: LastState) -> None:
    facts = facts_from_state("spoke-3", state, {}, INSTALL)
    assert (facts.namespaces, facts.installed, facts.rules) == ({}, {}, None)


def test_a_namespace_someone_else_made_exists_without_our_labels(state: LastState) -> None:
    """The state holds objects in knative-serving but no Namespace object of ours."""
    without = LastState.from_export({"deployment": {"resources": [
        r for r in _export(state) if not r["urn"].endswith(
            "Namespace::spoke-1:knative-serving")]}})
    facts = facts_from_state("spoke-1", without, {}, INSTALL)
    assert facts.namespaces["knative-serving"] == {}
    assert facts.installed["knative-serving"] == "1.22.1"


def test_facts_keep_the_defaults_of_fields_added_later(
        state: LastState, monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclasses.dataclass
    class Later(SpokeFacts):
        owner_records: dict = dataclasses.field(default_factory=dict)
        operator_crs_seen: tuple = ()

    monkeypatch.setattr("review.offline.inventory.SpokeFacts", Later)
    facts = facts_from_state("spoke-1", state, {}, INSTALL)
    assert isinstance(facts, Later)
    assert (facts.owner_records, facts.operator_crs_seen) == ({}, ())


def test_reach_builds_the_connection_without_running_the_plugin(
        state: LastState, snapshot: ProfileSnapshot, providers: str) -> None:
    inventory = OfflineInventory(snapshot, state, providers)
    inventory.open()
    got = inventory.reach("spoke-1", "fleet-system", "spoke-1", INSTALL)
    assert got.connection.server == state.spokes_output["spoke-1"]["server"]
    assert got.connection.command.endswith("never-run")
    assert got.credential.token is None
    assert got.server_version == state.spokes_output["spoke-1"]["kubernetesVersion"]
    assert inventory.reach("spoke-3", "fleet-system", "spoke-3",
                           INSTALL).server_version == UNKNOWN_VERSION


def test_without_a_readable_provider_file_the_server_still_comes_from_the_profile(
        state: LastState, snapshot: ProfileSnapshot, tmp_path: Path) -> None:
    inventory = OfflineInventory(snapshot, state, str(tmp_path / "missing.json"))
    inventory.open()
    assert inventory.provider_file_problem
    got = inventory.reach("spoke-2", "fleet-system", "spoke-2", INSTALL)
    assert got.connection.server == state.spokes_output["spoke-2"]["server"]
    assert got.connection.command == ""


def test_profiles_the_hub_would_refuse_fail_the_spoke_with_the_hubs_reason(
        state: LastState, snapshot: ProfileSnapshot, providers: str) -> None:
    inventory = OfflineInventory(snapshot, state, providers)
    inventory.open()
    with pytest.raises(ResolutionError) as missing:
        inventory.reach("spoke-9", "fleet-system", "no-such-profile", INSTALL)
    assert missing.value.reason == "ClusterProfileNotFound"
    sick = copy.deepcopy(snapshot.get("fleet-system", "spoke-1"))
    sick["status"]["conditions"][0]["status"] = "False"
    inventory = OfflineInventory(snapshot_of(["fleet-system"], [sick]), state, providers)
    inventory.open()
    with pytest.raises(ResolutionError) as unready:
        inventory.reach("spoke-1", "fleet-system", "spoke-1", INSTALL)
    assert unready.value.reason == "ClusterProfileNotReady"
    unconfigured = OfflineInventory(snapshot, state, None)
    with pytest.raises(ResolutionError) as disabled:
        unconfigured.reach("spoke-1", "fleet-system", "spoke-1", INSTALL)
    assert disabled.value.reason == "MulticlusterDisabled"


def test_a_namespace_the_snapshot_does_not_list_cannot_be_selected_from(
        state: LastState, snapshot: ProfileSnapshot) -> None:
    inventory = OfflineInventory(snapshot, state, None)
    assert {p["metadata"]["name"] for p in inventory.cluster_profiles("fleet-system")} == {
        "spoke-1", "spoke-2", "spoke-3"}
    with pytest.raises(ProfileError) as got:
        inventory.cluster_profiles("elsewhere")
    assert "python -m review profiles" in got.value.message


def test_snapshot_round_trips_and_refuses_other_documents(snapshot: ProfileSnapshot) -> None:
    again = ProfileSnapshot.from_json(json.loads(json.dumps(snapshot.to_json())))
    assert again == snapshot
    assert all("managedFields" not in p["metadata"] for p in snapshot.profiles)
    with pytest.raises(ValueError, match="not a ClusterProfile snapshot"):
        ProfileSnapshot.from_json({"items": []})


def test_secrets_of_the_export_open_when_plaintext_and_stay_hidden_otherwise() -> None:
    sig = "4dabf18193072939515e22adb298388d"
    got = reveal({"a": {sig: "x", "plaintext": json.dumps({"server": "s"})},
                  "b": [{sig: "x", "ciphertext": "v1:..."}]})
    assert got["a"] == {"server": "s"}
    assert got["b"][0] is HIDDEN and HIDDEN == "anything"


def _export(state: LastState) -> list[dict]:
    return list(state.resources.values())

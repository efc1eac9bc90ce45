"""The offline review of a recorded state and ClusterProfile snapshot (two spokes at
Knative 1.22): the report of each kind of change, the same shape as the live one, and
no socket opened."""

from __future__ import annotations

import copy
import json
import socket
from pathlib import Path

import pytest
import yaml

from core.resource_types import CLUSTER_RBAC, HELD_TYPES, NAMESPACED_OBJECTS
from lab.paths import REPO
from review.__main__ import main
from review.offline import markdown, review_offline
from review.resources import urn_name
from tests.support.releases import RELEASE_BASE

FIXTURES = REPO / "tests" / "support" / "offline"
STACK = "t-offdev"


def entry(name: str, serving: dict | None = None, eventing: dict | None = None,
          profile: str | None = None) -> dict:
    return {"name": name, "clusterProfileRef": {"name": profile or name,
                                                "namespace": "fleet-system"},
            "serving": serving or {"version": "1.22"}, "eventing": eventing or {"version": "1.22"}}


BASE = [entry("spoke-1"), entry("spoke-2")]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    providers = tmp_path / "providers.json"
    providers.write_text(json.dumps({"providers": [{"name": "secretreader", "execConfig": {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": str(tmp_path / "never-run"), "provideClusterInfo": True}}]}))
    return {"providers": providers, "config": tmp_path / f"Pulumi.{STACK}.yaml",
            "profiles": FIXTURES / "profiles.json", "state": FIXTURES / "state-1.22.json.gz",
            "out": tmp_path / "out"}


def configure(files: dict[str, Path], fleet: list[dict], **extra: object) -> None:
    config = {"knative-fleet:hub": {"kubeconfig": str(files["out"] / "no-hub.kubeconfig")},
              "knative-fleet:providerFile": str(files["providers"]),
              "knative-fleet:releaseBase": RELEASE_BASE, "knative-fleet:fleet": fleet,
              **{f"knative-fleet:{k}": v for k, v in extra.items()}}
    files["config"].write_text(yaml.safe_dump({"config": config}))


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the offline review opened a connection")
    monkeypatch.setattr(socket.socket, "connect", refuse)


def run(files: dict[str, Path]):  # noqa: ANN201 - OfflineReview
    return review_offline(STACK, files["config"], files["profiles"], files["state"])


def objects(got) -> set[tuple[str, str, str]]:  # noqa: ANN001
    return {(s.name, o.resource.label, o.op) for s in got.summary.spokes for o in s.objects}


def test_the_config_of_the_last_run_changes_nothing(files: dict[str, Path]) -> None:
    configure(files, BASE)
    got = run(files)
    assert got.summary.ok and got.summary.noop, objects(got)
    # the stack, the membership, 2 x 97 (89 objects, four of them the identity's Secret
    # reads, the components' two webhook-configuration removers, their two CRDs-first
    # steps, their two cluster-RBAC steps and their two namespaced-objects steps)
    assert got.summary.same == 196


def test_a_config_key_updates_one_configmap_with_its_field(files: dict[str, Path]) -> None:
    fleet = copy.deepcopy(BASE)
    fleet[0]["serving"]["config"] = {"defaults": {"revision-timeout-seconds": "123"}}
    configure(files, fleet)
    got = run(files)
    assert objects(got) == {("spoke-1", "ConfigMap knative-serving/config-defaults",
                             "updated")}
    change = got.summary.spokes[0].objects[0]
    assert [(f.path, f.new) for f in change.fields] == [
        ("data.revision-timeout-seconds", "123")]
    assert got.summary.unchanged == ["spoke-2"]


def test_a_version_step_is_named_and_changes_only_that_spoke(files: dict[str, Path]) -> None:
    fleet = copy.deepcopy(BASE)
    fleet[1]["serving"] = {"version": "1.23"}
    configure(files, fleet)
    got = run(files)
    assert [s.name for s in got.summary.spokes] == ["spoke-2"]
    spoke = got.summary.spokes[0]
    assert (spoke.serving.before, spoke.serving.after, spoke.serving.step()) == (
        "1.22.1", "1.23.0", "upgrade")
    assert ("spoke-2", "Job knative-serving/cleanup-serving-serving-1.22.1",
            "deleted") in objects(got)
    assert ("spoke-2", "Job knative-serving/cleanup-serving-serving-1.23.0",
            "created") in objects(got)
    # Owned objects keep their anchor's uid: only the version moves.
    activator = next(o for o in spoke.objects
                     if o.resource.label == "Deployment knative-serving/activator")
    assert all("ownerReferences" not in f.path for f in activator.fields)


def test_a_spoke_selected_by_label_is_created_whole(files: dict[str, Path]) -> None:
    snapshot = json.loads(files["profiles"].read_text())
    three = next(p for p in snapshot["profiles"] if p["metadata"]["name"] == "spoke-3")
    three["metadata"]["labels"]["review"] = "offline"
    files["profiles"] = files["out"].parent / "profiles.json"
    files["profiles"].write_text(json.dumps(snapshot))
    configure(files, BASE, groups=[{"name": "offline", "namespace": "fleet-system",
                                    "selector": {"matchLabels": {"review": "offline"}},
                                    "serving": {"version": "1.23"}}])
    got = run(files)
    [spoke] = got.summary.spokes
    assert spoke.name == "spoke-3" and spoke.added
    assert {o.op for o in spoke.objects} == {"created"}
    kinds = {o.resource.kind for o in spoke.objects}
    assert {"Spoke", "Provider", "AggregatedRoleSweep", "ClusterRbac", "NamespacedObjects",
            "Deployment"} <= kinds
    # Its ClusterRoleBindings are held by the cluster-RBAC steps, its ServiceAccounts,
    # Services, autoscalers and disruption budgets by the namespaced-objects steps, not
    # typed.
    assert not kinds & {"ClusterRoleBinding", "ServiceAccount", "Service",
                        "HorizontalPodAutoscaler", "PodDisruptionBudget"}, kinds
    assert [o.resource.kind for o in got.summary.fleet] == ["FleetMembership"]
    assert any(u.key == "newSpokes" and "spoke-3" in u.text for u in got.unknown)


def test_a_removed_entry_deletes_everything_of_its_spoke(files: dict[str, Path]) -> None:
    configure(files, BASE[:1])
    got = run(files)
    [spoke] = got.summary.spokes
    assert spoke.name == "spoke-2" and spoke.removed
    assert {o.op for o in spoke.objects} == {"deleted"} and len(spoke.objects) == 97


def test_an_unreachable_spoke_fails_the_review_and_deletes_nothing(
        files: dict[str, Path]) -> None:
    configure(files, [BASE[0], entry("spoke-9", profile="no-such-profile")])
    got = run(files)
    assert not got.summary.ok
    assert [(u.spoke, u.reason) for u in got.summary.unresolved] == [
        ("spoke-9", "ClusterProfileNotFound")]
    assert not any(o.op == "deleted" for s in got.summary.spokes for o in s.objects)


def test_an_invalid_config_fails_with_the_programs_error(files: dict[str, Path]) -> None:
    configure(files, [{"name": "Bad_Name"}])
    got = run(files)
    assert not got.summary.ok
    assert "the fleet configuration is invalid" in got.summary.errors[0]


def test_the_reports_say_what_they_cannot_know(files: dict[str, Path]) -> None:
    fleet = copy.deepcopy(BASE)
    fleet[0]["serving"]["high-availability"] = {"replicas": 2}
    configure(files, fleet)
    assert main(["--stack", STACK, "--offline", "--config", str(files["config"]),
                 "--profiles", str(files["profiles"]), "--state", str(files["state"]),
                 "--out", str(files["out"])]) == 0
    text = (files["out"] / "report.md").read_text()
    assert text.startswith(f"## knative-fleet preview `{STACK}`")
    assert "### Not known offline" in text and "live drift" in text
    report = json.loads((files["out"] / "report.json").read_text())
    assert report["schema"] == "knative-fleet-review/1"
    assert {u["key"] for u in report["offline"]["cannotKnow"]} >= {
        "drift", "reachability", "ownerRecords", "operatorCRs", "serverDefaults"}
    assert {o["kind"] for s in report["spokes"] for o in s["objects"]} >= {"Deployment"}
    assert len(markdown(run(files), limit=4000)) <= 4000


def test_offline_options_need_each_other(files: dict[str, Path]) -> None:
    with pytest.raises(SystemExit) as got:
        main(["--stack", STACK, "--offline", "--profiles", str(files["profiles"])])
    assert got.value.code == 2
    with pytest.raises(SystemExit) as got:
        main(["--stack", STACK, "--state", str(files["state"])])
    assert got.value.code == 2


def test_a_state_of_the_last_release_lets_its_typed_held_go_and_deletes_nothing(
        files: dict[str, Path]) -> None:
    """The state of the release before the last holds each CRD as a typed resource, kept
    on delete: the first run of this one takes them out of the state and leaves the CRDs
    on the spokes, its CRDs-first steps apply them again to record what they applied, and
    its cluster-RBAC and namespaced-objects steps are created."""
    files["state"] = FIXTURES / "state-1.22-typed-crds.json.gz"
    configure(files, BASE)
    got = run(files)
    assert got.summary.ok
    for spoke in got.summary.spokes:
        kinds = {(o.resource.kind, o.op, o.kept) for o in spoke.objects}
        assert kinds == {("CustomResourceDefinition", "deleted", True),
                         ("CustomResourceDefinitionsFirst", "updated", False),
                         ("ClusterRbac", "created", False),
                         ("NamespacedObjects", "created", False)}, kinds
    problems = {p.category: p.text for p in got.summary.needs_human}
    assert "deletes" not in problems and "namespaces" not in problems
    assert "replaces" not in problems
    assert "30 typed CRD resource(s) leave the state; the CRDs stay on the spoke" in (
        problems["crds"])


def test_a_state_of_the_last_release_lets_its_typed_rbac_go_and_deletes_nothing(
        files: dict[str, Path]) -> None:
    """The last release's state holds each ClusterRole, ClusterRoleBinding and owned
    ServiceAccount, Role, RoleBinding, Service, HorizontalPodAutoscaler and
    PodDisruptionBudget as a typed resource, not kept on delete:
    the first run of this one creates the cluster-RBAC and namespaced-objects steps, which
    hold exactly those objects, and registers the typed resources once more as they are
    (kept on delete, the next run lets them go); it deletes and replaces nothing."""
    files["state"] = FIXTURES / "state-1.22-typed-rbac.json.gz"
    configure(files, BASE)
    got = run(files)
    assert got.summary.ok
    for spoke in got.summary.spokes:
        kinds = {(o.resource.kind, o.op, o.kept) for o in spoke.objects}
        assert kinds == {("ClusterRbac", "created", False),
                         ("NamespacedObjects", "created", False)}, kinds
    steps = got.document["steps"]
    assert {s["op"] for s in steps} == {"same", "create"}
    created = [s for s in steps if s["op"] == "create"]
    assert sorted(s["newState"]["type"] for s in created) == sorted(
        [CLUSTER_RBAC.type] * 4 + [NAMESPACED_OBJECTS.type] * 4)
    typed = [s for s in steps if s["newState"]["type"] in HELD_TYPES]
    # 2 x (71 cluster RBAC + 7 aggregated + 52 owned namespaced + the Secret reads' Role
    # and RoleBinding in each of the 2 install namespaces), each as the state holds it
    assert len(typed) == 2 * (71 + 7 + 52 + 4) and {s["op"] for s in typed} == {"same"}
    for spoke in ("spoke-1", "spoke-2"):
        inputs = [s["oldState"]["inputs"] for s in typed
                  if urn_name(s["urn"]).startswith(f"{spoke}:")]
        # As the state holds them: the cluster-RBAC steps' ClusterRoles and bindings (not
        # the aggregated ones), the namespaced-objects steps' owned objects (not the
        # Secret reads').
        cluster = {f"{i['kind']}/{i['metadata']['name']}" for i in inputs
                   if "namespace" not in i["metadata"] and "aggregationRule" not in i}
        owned = {f"{i['kind']}/{i['metadata']['namespace']}/{i['metadata']['name']}"
                 for i in inputs if i["metadata"].get("ownerReferences")}
        for step_type, held, count in ((CLUSTER_RBAC.type, cluster, 71),
                                       (NAMESPACED_OBJECTS.type, owned, 52)):
            objects = [o for s in created if urn_name(s["urn"]).startswith(f"{spoke}:")
                       and s["newState"]["type"] == step_type
                       for o in s["newState"]["inputs"]["objects"]]
            assert len(held) == count and sorted(objects) == sorted(held), step_type
        # Each step holds its own component's objects.
        for s in created:
            if urn_name(s["urn"]).startswith(f"{spoke}:") and (
                    s["newState"]["type"] == NAMESPACED_OBJECTS.type):
                namespace = urn_name(s["urn"]).split(":", 1)[1].split("/", 1)[0]
                assert {o.split("/")[1] for o in s["newState"]["inputs"]["objects"]} == {
                    namespace}
    problems = {p.category for p in got.summary.needs_human}
    assert not problems & {"deletes", "replaces", "namespaces", "crds"}, problems
    # The review says so: each spoke's held objects are taken over unchanged, none is
    # named created or updated.
    rbac = [p for p in got.summary.needs_human if p.category == "rbac"]
    taken = "taken over from their typed resources, unchanged"
    assert sorted((p.spoke, len(p.objects), p.text) for p in rbac) == sorted(
        (spoke, count, f"{count} {names} {taken}")
        for spoke in ("spoke-1", "spoke-2")
        for count, names in ((71, "ClusterRole(s) and ClusterRoleBinding(s)"),
                             (52, "ServiceAccount(s), Role(s), RoleBinding(s), "
                                  "Service(s), autoscaler(s) and disruption budget(s)")))

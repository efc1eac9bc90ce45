"""The product end to end on the lab, real engine: install on two spokes,
no-op review, anchor loss and repair, a one-spoke upgrade, entry removal,
pre-existing namespaces, and destroy with zero leaked objects.

The tests share one stack and run in file order, like a user's day."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from knative.secret_reads import READS
from lab.fleet import FleetStack, entry
from lab.handle import Lab
from lab.wait import wait_for
from tests.support.fleet import HELD, changed_spokes, deployments_available, step_changes
from tests.support.snapshot import holds_left, kept_by_policy, managed_versions, snapshot

pytestmark = pytest.mark.e2e
ANCHORS = {
    "knative-serving": ("knativeserving-knative-serving-root-owner", "knative-serving"),
    "knative-eventing": ("knativeeventing-knative-eventing-root-owner", "knative-eventing"),
}
USER_NS = "knative-eventing"


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    stack = FleetStack(lab, f"t-life-{uuid.uuid4().hex[:6]}", tmp_path_factory.mktemp("state"))
    s1, s2 = (lab.spokes[0], lab.spokes[1])
    core2 = client.CoreV1Api(s2.api())
    state = {"stack": stack, "s1": s1, "s2": s2, "spokes": lab.spokes}
    try:
        # spoke-2 already has the Eventing namespace, with a user's object in it.
        core2.create_namespace({"metadata": {"name": USER_NS, "labels": {"team": "users"}}})
        core2.create_namespaced_config_map(USER_NS, {"metadata": {"name": "users-own"},
                                                     "data": {"keep": "me"}})
        state["before"] = {s.name: snapshot(s.api()) for s in lab.spokes}
        stack.init()
        yield state
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()
        delete_and_wait(core2, USER_NS)


def delete_and_wait(core: client.CoreV1Api, name: str, timeout: float = 120) -> None:
    """Deletes a namespace and waits until it is gone, so later tests start clean."""
    try:
        core.delete_namespace(name)
    except ApiException:
        return

    def gone() -> bool:
        try:
            core.read_namespace(name)
        except ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, timeout=timeout, what=f"namespace {name} gone (still terminating)")


def fleet_v1(ns_labels: dict | None = None) -> list[dict]:
    s1 = entry("spoke-1")
    s1["serving"]["namespaceConfiguration"] = {"labels": ns_labels or {"team": "platform"}}
    s1["eventing"]["namespaceConfiguration"] = {"labels": {"team": "platform"}}
    s2 = entry("spoke-2", serving="1.22", eventing="1.23")
    s2["eventing"]["namespaceConfiguration"] = {"labels": {"team": "platform"}}
    return [s1, s2]


def assert_no_hold_left(world: dict) -> None:
    """No spoke of the lab keeps a run's hold (the Lease kube-system/knative-fleet-hold):
    a run that ends deletes it."""
    left = holds_left({s.name: s.api() for s in world["spokes"]})
    assert left == {}, f"hold Lease kube-system/knative-fleet-hold left, by spoke: {left}"


def owned_objects(api: client.ApiClient, namespace: str) -> list[tuple[str, str, list]]:
    """(kind, name, ownerReferences) of every object the install put in `namespace`."""
    out = []
    selector = "app.kubernetes.io/managed-by=knative-fleet"
    listers = {
        "ConfigMap": client.CoreV1Api(api).list_namespaced_config_map,
        "Service": client.CoreV1Api(api).list_namespaced_service,
        "ServiceAccount": client.CoreV1Api(api).list_namespaced_service_account,
        "Secret": client.CoreV1Api(api).list_namespaced_secret,
        "Deployment": client.AppsV1Api(api).list_namespaced_deployment,
        "Role": client.RbacAuthorizationV1Api(api).list_namespaced_role,
        "RoleBinding": client.RbacAuthorizationV1Api(api).list_namespaced_role_binding,
    }
    for kind, lister in listers.items():
        for obj in lister(namespace, label_selector=selector).items:
            out.append((kind, obj.metadata.name, obj.metadata.owner_references or []))
    return out


def test_install_on_two_spokes(world: dict) -> None:
    stack: FleetStack = world["stack"]
    stack.configure(fleet_v1())
    res = stack.up()
    assert res.ok, res.why
    assert_no_hold_left(world)
    for spoke in (world["s1"], world["s2"]):
        api = spoke.api()
        for ns, (anchor, cr_name) in ANCHORS.items():
            deployments = deployments_available(api, ns)
            assert deployments and all(deployments.values()), (spoke.name, ns, deployments)
            cm = client.CoreV1Api(api).read_namespaced_config_map(anchor, ns)
            assert cm.data is None
            assert cm.metadata.labels["app.kubernetes.io/managed-by"] == "knative-fleet"
            assert cm.metadata.labels["operator.knative.dev/cr-name"] == cr_name
            assert cm.metadata.annotations["operator.knative.dev/anchor"] == "true"
            assert cm.metadata.annotations["operator.knative.dev/protected"] == "true"
            assert "operator.knative.dev/description" in cm.metadata.annotations
            objects = owned_objects(api, ns)
            assert len(objects) > 10
            for kind, name, refs in objects:
                if (kind, name) == ("ConfigMap", anchor):
                    continue
                if name == READS:  # Secret reads: no owner, they outlive every Secret
                    assert kind in ("Role", "RoleBinding") and refs == [], (kind, refs)
                    continue
                assert len(refs) == 1, (spoke.name, ns, kind, name, refs)
                ref = refs[0]
                assert (ref.kind, ref.name, ref.uid) == ("ConfigMap", anchor, cm.metadata.uid)
                assert ref.controller and ref.block_owner_deletion
    world["crds"] = {s.name: knative_crds(s.api()) for s in (world["s1"], world["s2"])}
    outputs = stack.outputs()["spokes"]
    for name in ("spoke-1", "spoke-2"):
        assert outputs[name]["targetClusterResolved"]["status"] == "True"
        assert outputs[name]["ready"] is True
    assert outputs["spoke-2"]["serving"] == "1.22.1"
    assert outputs["spoke-1"]["serving"] == "1.23.0"


def test_second_preview_and_up_change_nothing(world: dict) -> None:
    stack: FleetStack = world["stack"]
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {}, changed_spokes(steps)
    res = stack.run("up", "--yes", "--skip-preview", "--expect-no-changes")
    assert res.ok, res.why


def test_namespace_settings_only_on_namespaces_we_create(world: dict) -> None:
    core1 = client.CoreV1Api(world["s1"].api())
    assert core1.read_namespace("knative-serving").metadata.labels["team"] == "platform"
    core2 = client.CoreV1Api(world["s2"].api())
    ns = core2.read_namespace(USER_NS)
    assert ns.metadata.labels.get("team") == "users"
    assert "app.kubernetes.io/managed-by" not in ns.metadata.labels
    assert core2.read_namespaced_config_map("users-own", USER_NS).data == {"keep": "me"}


SERVING_WEBHOOK_CONFIGURATIONS = {
    "validating": ("config.webhook.serving.knative.dev", "validation.webhook.serving.knative.dev"),
    "mutating": ("webhook.serving.knative.dev",)}


def anchor_finalizers(core: client.CoreV1Api, anchor: str) -> list[str] | None:
    """The anchor's finalizers, None once it is gone."""
    try:
        return core.read_namespaced_config_map(anchor, "knative-serving").metadata.finalizers
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_deleted_anchor_is_collected_then_restored_by_refresh(world: dict) -> None:
    stack: FleetStack = world["stack"]
    api = world["s1"].api()
    core = client.CoreV1Api(api)
    anchor, _ = ANCHORS["knative-serving"]
    core.patch_namespaced_config_map(anchor, "knative-serving",
                                     {"metadata": {"finalizers": [HELD]}})
    core.delete_namespaced_config_map(anchor, "knative-serving",
                                      propagation_policy="Foreground")
    # The garbage collector drops its foregroundDeletion finalizer once every object the
    # anchor owns is gone; the test's own finalizer keeps the anchor Terminating after.
    wait_for(lambda: anchor_finalizers(core, anchor) == [HELD], timeout=300, interval=1,
             what="GC collecting every object the anchor owns")
    assert deployments_available(api, "knative-serving") == {}, "GC did not collect Deployments"
    # While the anchor is being deleted a run refuses the spoke and changes nothing there:
    # a restore now would keep objects the garbage collector is about to take.
    before = managed_versions(api)
    refused = stack.up("--refresh")
    assert not refused.ok, refused.out
    assert "spoke 'spoke-1': AnchorBeingDeleted" in refused.out, refused.out
    assert f"knative-serving/{anchor} (since " in refused.out, refused.out
    assert managed_versions(api) == before
    core.patch_namespaced_config_map(anchor, "knative-serving", {"metadata": {"finalizers": None}})
    wait_for(lambda: anchor_finalizers(core, anchor) is None, timeout=120, interval=1,
             what="the anchor gone")
    # Knative's webhook configurations outlive the anchor's objects and, their webhook gone
    # (it cannot start without the ConfigMaps they now refuse), block the restore as on a real
    # spoke: the recovery docs/troubleshooting.md gives deletes them, then one refresh
    # restores everything, those configurations included.
    admission = client.AdmissionregistrationV1Api(api)
    for name in SERVING_WEBHOOK_CONFIGURATIONS["validating"]:
        admission.delete_validating_webhook_configuration(name)
    for name in SERVING_WEBHOOK_CONFIGURATIONS["mutating"]:
        admission.delete_mutating_webhook_configuration(name)
    res = stack.up("--refresh")
    assert res.ok, res.why
    for name in SERVING_WEBHOOK_CONFIGURATIONS["validating"]:
        assert admission.read_validating_webhook_configuration(name).webhooks
    deployments = deployments_available(api, "knative-serving")
    assert deployments and all(deployments.values())
    new_uid = core.read_namespaced_config_map(anchor, "knative-serving").metadata.uid
    for kind, name, refs in owned_objects(api, "knative-serving"):
        if name not in (anchor, READS):
            assert [r.uid for r in refs] == [new_uid], (kind, name)


def test_upgrade_one_spoke_changes_only_that_spoke(world: dict) -> None:
    stack: FleetStack = world["stack"]
    fleet = fleet_v1()
    fleet[1]["serving"]["version"] = "1.23"
    stack.configure(fleet)
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert set(changed_spokes(steps)) == {"spoke-2"}, step_changes(steps)
    res = stack.up()
    assert res.ok, res.why
    assert stack.outputs()["spokes"]["spoke-2"]["serving"] == "1.23.0"
    images = [c.image for d in client.AppsV1Api(world["s2"].api())
              .list_namespaced_deployment("knative-serving").items
              for c in d.spec.template.spec.containers]
    assert images and not any("v1.22" in i for i in images if "knative" in i), images
    labels = {d.metadata.name: d.metadata.labels.get("app.kubernetes.io/version")
              for d in client.AppsV1Api(world["s2"].api())
              .list_namespaced_deployment("knative-serving").items}
    assert labels and set(labels.values()) == {"1.23.0"}, labels


def test_entry_without_eventing_and_removing_an_entry(world: dict) -> None:
    stack: FleetStack = world["stack"]
    fleet = fleet_v1()
    fleet[1]["serving"]["version"] = "1.23"
    del fleet[0]["eventing"]
    # The released Kubernetes provider, on a busy machine, can record for an object its
    # upgrade updated the copy from before its own write (seen: a Deployment's old version
    # label), while the spoke holds the new one (the last test checked): a refresh records
    # what the spoke holds, as README's take-over, step 5, says.
    res = stack.run("refresh", "--yes", "--skip-preview")
    assert res.ok, res.why
    stack.configure(fleet)
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert set(changed_spokes(steps)) == {"spoke-1"}, step_changes(steps)
    res = stack.up()
    assert res.ok, res.why
    core1 = client.CoreV1Api(world["s1"].api())
    with pytest.raises(ApiException) as err:
        core1.read_namespace("knative-eventing")
    assert err.value.status == 404
    stack.configure([fleet[0]])
    res, steps = stack.preview_steps()
    assert set(changed_spokes(steps)) == {"spoke-2"}
    assert changed_spokes(steps)["spoke-2"] == {"delete"}
    res = stack.up()
    assert res.ok, res.why
    after = snapshot(world["s2"].api())
    assert after - world["before"]["spoke-2"] <= kept_by_policy(after)
    assert client.CoreV1Api(world["s2"].api()).read_namespaced_config_map(
        "users-own", USER_NS).data == {"keep": "me"}
    assert deployments_available(world["s1"].api(), "knative-serving")


def knative_crds(api: client.ApiClient) -> dict[str, str]:
    """{name: uid} of the Knative CRDs on the cluster."""
    return {c.metadata.name: c.metadata.uid
            for c in client.ApiextensionsV1Api(api).list_custom_resource_definition().items
            if c.metadata.name.endswith(".knative.dev")}


USERS_SERVICE = {"apiVersion": "serving.knative.dev/v1", "kind": "Service",
                 "metadata": {"name": "users-hello", "namespace": "default"},
                 "spec": {"template": {"spec": {"containers": [
                     {"image": "registry.example/hello:1"}]}}}}
KSVC = ("serving.knative.dev", "v1", "services")
USERS_SERVICE_KEY = ("serving.knative.dev/Service", "default", "users-hello")


def test_destroy_leaves_nothing_but_kept_crds(world: dict) -> None:
    stack: FleetStack = world["stack"]
    # A user's Knative Service on spoke-1 (admitted by Serving's webhook): the CRDs are kept
    # on destroy so that it, and every other user object of theirs, stays (README).
    custom = client.CustomObjectsApi(world["s1"].api())
    users = custom.create_namespaced_custom_object(*KSVC[:2], "default", KSVC[2], USERS_SERVICE)
    try:
        res = stack.destroy()
        assert res.ok, res.why
        assert_no_hold_left(world)
        kept = custom.get_namespaced_custom_object(*KSVC[:2], "default", KSVC[2],
                                                   USERS_SERVICE_KEY[2])
        assert kept["metadata"]["uid"] == users["metadata"]["uid"]
        for spoke in (world["s1"], world["s2"]):
            crds = knative_crds(spoke.api())
            renewed = sorted(n for n, uid in world["crds"][spoke.name].items()
                             if crds.get(n) != uid)
            assert renewed == [], (spoke.name, "CRDs deleted or created anew", renewed)
            after = snapshot(spoke.api())
            leaked = (after - world["before"][spoke.name] - kept_by_policy(after)
                      - {USERS_SERVICE_KEY})
            assert leaked == set(), (spoke.name, sorted(leaked)[:20])
            missing = world["before"][spoke.name] - after
            assert missing == set(), (spoke.name, sorted(missing)[:20])
    finally:
        custom.delete_namespaced_custom_object(*KSVC[:2], "default", KSVC[2],
                                               USERS_SERVICE_KEY[2])


def test_state_has_no_secrets(world: dict, tmp_path: Path) -> None:
    del tmp_path
    assert "spokes" not in str(world["stack"].export().get("deployment", {}).get("secrets", ""))

"""knative-fleet held against the Knative Operator itself, on the lab.

The operator (knative.dev/operator, built by the toolchain) runs out-of-cluster against
spoke-1 and installs a rich KnativeServing and KnativeEventing from its own release
files (kodata); knative-fleet installs the same two specs on spoke-2 from the same bytes
(a release base of symlinks into that kodata). Every object of the two installs is then
compared field by field; each difference is fixed or listed in
tests/support/operator_differences.py with its reason, and that list is the "differs from
the operator" column of the spec table in docs/configuration.md.

Then spoke-1 is taken over as the README's "Taking over a spoke the Knative Operator runs" says:
the operator stops, its CRs are released (finalizers off, deleted with propagationPolicy
Orphan), knative-fleet adopts the running objects with `pulumi up`, and the operator is
removed; every Deployment stays Available throughout, no object is deleted or created
anew (uids compared), and `pulumi preview` then shows no change.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import yaml
from kubernetes import client

from lab.fleet import FleetStack
from lab.handle import Lab
from lab.operator import KnativeOperator, cr
from lab.wait import wait_for
from tests.support import parity
from tests.support.fleet import all_available, changed_spokes, step_changes
from tests.support.operator_differences import KNOWN, RICH
from tests.support.operator_lab import (
    EVENTING,
    SERVING,
    clean_spoke,
    comparable,
    fleet_entry,
    install,
    keep,
    remove_knative_crds,
    spec,
    take_over,
)
from tests.support.snapshot import expires, objects
from tests.support.watch import deployments_availability

pytestmark = pytest.mark.e2e
OPERATOR_KINDS = {"operator.knative.dev/KnativeServing", "operator.knative.dev/KnativeEventing"}


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tmp = tmp_path_factory.mktemp("parity")
    extra = tmp / "team.yaml"
    extra.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "team-settings", "namespace": SERVING}, "data": {"a": "b"}},
    ]))
    serving = spec("parity-knativeserving.yaml")
    serving["additionalManifests"] = [{"URL": str(extra)}]
    eventing = spec("parity-knativeeventing.yaml")
    s1, s2 = lab.spokes[0], lab.spokes[1]
    api1, api2 = s1.api(), s2.api()
    operator = KnativeOperator(s1, lab.bin, lab.dir.root / "knative-operator.log")
    mirror = parity.mirror_from_kodata(operator.kodata, tmp / "releases",
                                       serving["version"], eventing["version"])
    stack = FleetStack(lab, f"t-parity-{uuid.uuid4().hex[:6]}", tmp / "state")
    stack.init()
    world: dict = {"stack": stack, "serving": serving, "eventing": eventing,
                   "api1": api1, "api2": api2, "operator": operator,
                   "release_base": f"file://{mirror}"}
    try:
        clean_spoke(lab, api1)  # anything an earlier, interrupted run left
        for api in (api1, api2):
            remove_knative_crds(api)
        operator.install_crds(api1)
        before1, before2 = set(objects(api1)), set(objects(api2))
        core = client.CoreV1Api(api1)
        for ns in (SERVING, EVENTING):
            core.create_namespace({"metadata": {"name": ns}})
        operator.start()
        operator.apply(api1, cr("KnativeServing", SERVING, serving))
        operator.apply(api1, cr("KnativeEventing", EVENTING, eventing))
        operator.wait_ready(api1, "KnativeServing", SERVING, SERVING)
        operator.wait_ready(api1, "KnativeEventing", EVENTING, EVENTING)

        world["fleet"] = [fleet_entry(s2.name, serving, eventing)]
        stack.configure(world["fleet"], releaseBase=world["release_base"])
        res = stack.up()
        assert res.ok, res.why
        world["operator_install"] = install(api1, before1)
        world["fleet_install"] = install(api2, before2)
        keep(lab.dir.root / "parity", world)
        yield world
    finally:
        operator.stop()
        stack.destroy()
        stack.remove()
        stack.cleanup()
        clean_spoke(lab, api1)


def test_both_installs_are_ready(world: dict) -> None:
    # Waited for: the spec's autoscaled webhook gets its second replica after the install,
    # and its Deployment is not Available until the new pod's webhook answers.
    for api in (world["api1"], world["api2"]):
        for ns in (SERVING, EVENTING):
            wait_for(lambda api=api, ns=ns: all_available(api, ns), timeout=180, interval=1,
                     what=f"every Deployment of {ns} Available")


def test_every_object_matches_the_operator_or_is_a_listed_difference(world: dict) -> None:
    found = parity.differences(comparable(world["operator_install"]),
                               comparable(world["fleet_install"]))
    unexplained = parity.unexplained(found, KNOWN, RICH)
    assert not unexplained, "differences from the operator not fixed nor listed:\n" + \
        "\n".join(str(f) for f in unexplained[:80]) + f"\n({len(unexplained)} in all)"
    stale = parity.unused(found, KNOWN, RICH)
    assert not stale, "listed differences the installs no longer show: " + \
        ", ".join(f"{k.row}: {k.path}" for k in stale)
    # The comparison saw the whole install, not an empty one.
    kinds = {k[0] for k in world["fleet_install"]}
    assert {"apps/Deployment", "/ConfigMap", "autoscaling/HorizontalPodAutoscaler",
            "apiextensions.k8s.io/CustomResourceDefinition", "batch/Job",
            "policy/PodDisruptionBudget", "rbac.authorization.k8s.io/ClusterRole",
            "admissionregistration.k8s.io/ValidatingWebhookConfiguration"} <= kinds
    assert len(world["fleet_install"]) > 200


def test_the_installed_spec_previews_no_change(world: dict) -> None:
    # Every object as applied equals what the spoke stores (an empty rule list once
    # showed as a change on every preview).
    res, steps = world["stack"].preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {}, step_changes(steps)


def test_take_over_a_spoke_the_operator_runs(world: dict) -> None:
    api1, stack, operator = world["api1"], world["stack"], world["operator"]
    before = {k: v["metadata"]["uid"] for k, v in objects(api1).items()
              if k in world["operator_install"] and k[0] not in OPERATOR_KINDS}
    fleet = [*world["fleet"], fleet_entry("spoke-1", world["serving"], world["eventing"])]
    with deployments_availability(api1, [SERVING, EVENTING]) as availability:
        # The operator stops (it neither reverts the adoption nor runs its uninstall), its
        # CRs are released (finalizer off, deleted orphaning), knative-fleet adopts the
        # running objects (the review shows no delete or replace), the operator goes.
        take_over(stack, api1, operator, {"KnativeServing": SERVING, "KnativeEventing": EVENTING},
                  fleet, releaseBase=world["release_base"])
    assert availability.seen >= {(SERVING, "controller"), (EVENTING, "eventing-controller")}
    assert not availability.unavailable, availability.unavailable
    after = {k: v["metadata"]["uid"] for k, v in objects(api1).items()}
    # Finished Jobs with a TTL are deleted by the cluster on its own schedule (and the
    # operator, while it still runs, applies them anew): neither is the take-over's doing.
    installed = world["operator_install"]
    gone = sorted(k for k in before if k not in after and not expires(k, installed[k]))
    renewed = sorted(k for k in before if k in after and after[k] != before[k]
                     and not expires(k, installed[k]))
    assert not gone, f"objects deleted by the take-over: {gone}"
    assert not renewed, f"objects created anew by the take-over: {renewed}"
    # The namespaced objects the operator installed are owned by the anchor alone now.
    owners = {k: [r["kind"] for r in v["metadata"].get("ownerReferences") or []]
              for k, v in objects(api1).items() if k in before and k[1] in (SERVING, EVENTING)}
    assert owners and {k: o for k, o in owners.items() if o != ["ConfigMap"]} == {}
    # README, "Taking a spoke over from the Knative Operator", step 5: the released
    # provider can record an adopted object's copy from before its own write; the
    # refresh records what the spoke holds, and then a preview shows no change.
    res = stack.run("refresh", "--yes", "--skip-preview")
    assert res.ok, res.why
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {}, step_changes(steps)


def test_destroy_after_the_take_over_keeps_the_install_namespaces(world: dict) -> None:
    """README, "Taking a spoke over from the Knative Operator": the install namespaces stay
    yours. They existed before knative-fleet: a destroy deletes what it installed in them,
    never them."""
    res = world["stack"].destroy()
    assert res.ok, res.why
    core = client.CoreV1Api(world["api1"])
    for ns in (SERVING, EVENTING):
        namespace = core.read_namespace(ns)
        assert namespace.metadata.deletion_timestamp is None, ns
        assert namespace.status.phase == "Active", ns
        assert "knative-fleet" not in (namespace.metadata.labels or {}).values(), (
            ns, namespace.metadata.labels)

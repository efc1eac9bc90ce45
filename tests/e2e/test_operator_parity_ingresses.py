"""knative-fleet held against the Knative Operator on the spec-table rows the rich parity
install (tests/e2e/test_operator_parity.py) cannot take: it installs Kourier with a
NodePort Service from the release files, and knative-fleet installs one ingress at a time.

So three more Serving-only installs, one after the other, each by the operator (v0.48.1,
out-of-cluster) on spoke-1 and by knative-fleet on spoke-2, from the same release files
(a release base of symlinks into the operator's kodata):

- `kourier-lb-manifests`: `manifests` naming the release files by absolute path, and
  Kourier's Service a LoadBalancer with `service-load-balancer-ip`;
- `istio`: net-istio with both Gateways' `selector` and `servers` set;
- `contour`: net-contour.

Each spec is a file under tests/e2e/operator_specs/ saying which rows it exercises. The
ingresses' own CRDs (Istio's, Contour's) are stubs that keep any field, created on both
spokes before the installs and removed after. Every object is compared field by field as
in the rich install; what differs is fixed or listed in
tests/support/operator_differences.py, with the installs it is about.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from kubernetes import client

from lab.crds import install_crds
from lab.fleet import FleetStack
from lab.handle import Lab
from lab.idempotent import create_if_absent
from lab.operator import OPERATOR_NAMESPACE, KnativeOperator, cr
from lab.removal import delete_namespaces, delete_namespaces_then_crds
from lab.wait import wait_for
from tests.support import parity
from tests.support.fleet import all_available, changed_spokes, step_changes
from tests.support.operator_differences import CONTOUR, ISTIO, KNOWN, KOURIER_LB
from tests.support.operator_lab import (
    EVENTING,
    SERVING,
    clean_spoke,
    comparable,
    delete_resurrected_roles,
    fleet_entry,
    install,
    keep,
    remove_knative_crds,
    spec,
)
from tests.support.snapshot import objects

pytestmark = pytest.mark.e2e
ISTIO_SYSTEM = "istio-system"


def stub_crd(group: str, kind: str, plural: str, versions: tuple[str, ...]) -> dict:
    """A namespaced CRD that keeps whatever it is given: enough for the release's objects
    of that kind to be applied (no controller acts on them)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                           "listKind": f"{kind}List"},
                 "versions": [{"name": v, "served": True, "storage": i == 0,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}
                              for i, v in enumerate(versions)]},
    }


@dataclass(frozen=True)
class Variant:
    """One Serving-only install: its spec file, the stub CRDs and extra namespaces its
    ingress needs, and objects its install must have (the comparison saw the ingress)."""

    name: str
    spec_file: str
    crds: tuple[dict, ...] = ()
    namespaces: tuple[str, ...] = ()
    expect: tuple[parity.Key, ...] = ()


VARIANTS = (
    Variant(KOURIER_LB, "parity-kourier-lb-manifests.yaml",
            expect=(("/Service", SERVING, "kourier"),
                    ("apps/Deployment", SERVING, "3scale-kourier-gateway"))),
    Variant(ISTIO, "parity-istio.yaml",
            crds=(stub_crd("networking.istio.io", "Gateway", "gateways", ("v1beta1",)),
                  stub_crd("security.istio.io", "PeerAuthentication", "peerauthentications",
                           ("v1beta1",))),
            namespaces=(ISTIO_SYSTEM,),
            expect=(("networking.istio.io/Gateway", SERVING, "knative-ingress-gateway"),
                    ("networking.istio.io/Gateway", SERVING, "knative-local-gateway"),
                    ("/Service", ISTIO_SYSTEM, "knative-local-gateway"),
                    ("apps/Deployment", SERVING, "net-istio-controller"))),
    Variant(CONTOUR, "parity-contour.yaml",
            crds=(stub_crd("projectcontour.io", "TLSCertificateDelegation",
                           "tlscertificatedelegations", ("v1",)),),
            expect=(("projectcontour.io/TLSCertificateDelegation", SERVING,
                     "knative-serving-certs"),
                    ("apps/Deployment", SERVING, "net-contour-controller"))),
)


@pytest.fixture(scope="module")
def bench(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """What every variant shares: the operator (not running), the release base built
    from its kodata, and one knative-fleet stack (installed and destroyed per variant)."""
    tmp = tmp_path_factory.mktemp("parity-ingresses")
    operator = KnativeOperator(lab.spokes[0], lab.bin, lab.dir.root / "knative-operator.log")
    mirror = parity.mirror_from_kodata(operator.kodata, tmp / "releases", "1.21.1",
                                       spec("parity-knativeeventing.yaml")["version"])
    stack = FleetStack(lab, f"t-parity-ing-{uuid.uuid4().hex[:6]}", tmp / "state")
    stack.init()
    try:
        yield {"operator": operator, "mirror": mirror, "stack": stack,
               "release_base": f"file://{mirror}"}
    finally:
        stack.remove()
        stack.cleanup()


@pytest.fixture(scope="module", params=VARIANTS, ids=[v.name for v in VARIANTS])
def world(request: pytest.FixtureRequest, lab: Lab, bench: dict) -> Iterator[dict]:
    variant: Variant = request.param
    serving = spec(variant.spec_file, MIRROR=str(bench["mirror"]))
    s1, s2 = lab.spokes[0], lab.spokes[1]
    api1, api2 = s1.api(), s2.api()
    operator: KnativeOperator = bench["operator"]
    stack: FleetStack = bench["stack"]
    world = {"variant": variant, "serving": serving, "api1": api1, "api2": api2,
             "stack": stack}
    # The operator's namespace too: the next variant's operator starts in a new one.
    spoke1_namespaces = (SERVING, EVENTING, OPERATOR_NAMESPACE, *variant.namespaces)
    try:
        clean_spoke(lab, api1, spoke1_namespaces)  # what an earlier, interrupted run left
        for api in (api1, api2):
            remove_knative_crds(api)
            delete_resurrected_roles(api)
            _prepare(api, variant)
        operator.install_crds(api1)
        before1, before2 = set(objects(api1)), set(objects(api2))
        client.CoreV1Api(api1).create_namespace({"metadata": {"name": SERVING}})
        operator.start()
        # The operator reconciles on its own while knative-fleet installs spoke-2.
        operator.apply(api1, cr("KnativeServing", SERVING, serving))
        stack.configure([fleet_entry(s2.name, serving)], releaseBase=bench["release_base"])
        res = stack.up()
        assert res.ok, res.why
        operator.wait_ready(api1, "KnativeServing", SERVING, SERVING)
        world["operator_install"] = install(api1, before1)
        world["fleet_install"] = install(api2, before2)
        keep(lab.dir.root / f"parity-{variant.name}", world)
        yield world
    finally:
        operator.stop()
        stack.destroy()
        clean_spoke(lab, api1, spoke1_namespaces)
        # Gone before the next variant installs (see delete_resurrected_roles).
        delete_namespaces(api2, (SERVING,))
        resurrected = delete_resurrected_roles(api2)
        if resurrected:
            where = lab.dir.root / f"parity-{variant.name}"
            where.mkdir(parents=True, exist_ok=True)
            (where / "resurrected-after-destroy.json").write_text(json.dumps(resurrected))
        for api in (api1, api2):
            _unprepare(api, variant)


def _prepare(api: client.ApiClient, variant: Variant) -> None:
    """The variant's stub CRDs (Established) and extra namespaces on one spoke."""
    install_crds(api, variant.crds)
    core = client.CoreV1Api(api)
    for ns in variant.namespaces:
        create_if_absent(core.create_namespace, {"metadata": {"name": ns}})


def _unprepare(api: client.ApiClient, variant: Variant) -> None:
    """Takes away what _prepare made (and waits until it is gone)."""
    delete_namespaces_then_crds(api, variant.namespaces,
                                [crd["metadata"]["name"] for crd in variant.crds])


def test_both_installs_are_ready(world: dict) -> None:
    # Waited for: an autoscaled webhook's Deployment is not Available until the pod it
    # scaled up to answers (tests/e2e/test_operator_parity.py).
    for api in (world["api1"], world["api2"]):
        wait_for(lambda api=api: all_available(api, SERVING), timeout=180, interval=1,
                 what=f"every Deployment of {SERVING} Available")


def test_every_object_matches_the_operator_or_is_a_listed_difference(world: dict) -> None:
    variant: Variant = world["variant"]
    found = parity.differences(comparable(world["operator_install"]),
                               comparable(world["fleet_install"]))
    unexplained = parity.unexplained(found, KNOWN, variant.name)
    assert not unexplained, "differences from the operator not fixed nor listed:\n" + \
        "\n".join(str(f) for f in unexplained[:80]) + f"\n({len(unexplained)} in all)"
    stale = parity.unused(found, KNOWN, variant.name)
    assert not stale, "listed differences the installs no longer show: " + \
        ", ".join(f"{k.row}: {k.kind} {k.name} {k.path}" for k in stale)
    # The comparison saw the whole install, its ingress included.
    for side in ("operator_install", "fleet_install"):
        missing = set(variant.expect) - set(world[side])
        assert not missing, (side, missing)
    assert len(world["fleet_install"]) > 60


def test_the_installed_spec_previews_no_change(world: dict) -> None:
    res, steps = world["stack"].preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {}, step_changes(steps)

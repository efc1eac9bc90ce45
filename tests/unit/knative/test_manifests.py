"""Release objects -> one spoke's objects, on the real 1.23 release files."""

from __future__ import annotations

import copy
import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from core.errors import ReleaseError
from core.names import (
    CR_NAME_LABEL,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    NAME_LABEL,
    SKIP_AWAIT_ANNOTATION,
    anchor_name,
)
from knative import manifests, release_fetch, releases
from knative.manifests import Rendered
from tests.support.releases import RELEASE_BASE as BASE
from tests.support.releases import release_documents as _docs
from tests.support.releases import rendered

SERVING_NS = "knative-serving"
EVENTING_NS = "knative-eventing"


def _all(rendered: Rendered) -> list[dict]:
    return [*rendered.crds, *rendered.cluster_scoped, *rendered.namespaced, *rendered.external]


def _find(objs: list[dict], kind: str, name: str) -> dict:
    (found,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


@pytest.fixture(scope="module")
def serving() -> Rendered:
    return rendered("serving")


@pytest.fixture(scope="module")
def eventing() -> Rendered:
    return rendered("eventing")


# --- Serving 1.23 + Kourier -------------------------------------------------------------

def test_serving_drops_namespaces(serving: Rendered) -> None:
    assert serving.namespaces_dropped == [SERVING_NS, "kourier-system"]
    assert not [o for o in _all(serving) if o["kind"] == "Namespace"]


def test_serving_everything_namespaced_is_in_knative_serving(serving: Rendered) -> None:
    assert serving.namespaced
    assert {o["metadata"]["namespace"] for o in serving.namespaced} == {SERVING_NS}
    assert serving.external == []
    for obj in [*serving.crds, *serving.cluster_scoped]:
        assert "namespace" not in obj["metadata"], manifests.object_key(obj)


def test_serving_nothing_references_kourier_system(serving: Rendered) -> None:
    assert "kourier-system" not in json.dumps(_all(serving))


def test_kourier_runs_inside_knative_serving(serving: Rendered) -> None:
    ns = serving.namespaced
    for kind, name in [
        ("Deployment", "3scale-kourier-gateway"),
        ("Service", "kourier"),
        ("Service", "kourier-internal"),
        ("ConfigMap", "kourier-bootstrap"),
        ("HorizontalPodAutoscaler", "3scale-kourier-gateway"),
        ("PodDisruptionBudget", "3scale-kourier-gateway-pdb"),
    ]:
        assert _find(ns, kind, name)["metadata"]["namespace"] == SERVING_NS
    controller = _find(ns, "Deployment", "net-kourier-controller")
    env = {
        e["name"]: e.get("value")
        for e in controller["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["KOURIER_GATEWAY_NAMESPACE"] == SERVING_NS
    assert env["CERTS_SECRET_NAMESPACE"] == ""  # empty upstream: still unset
    binding = _find(serving.cluster_scoped, "ClusterRoleBinding", "net-kourier")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "net-kourier", "namespace": SERVING_NS}]
    bootstrap = _find(ns, "ConfigMap", "kourier-bootstrap")["data"]["envoy-bootstrap.yaml"]
    assert '"net-kourier-controller.knative-serving"' in bootstrap


def test_services_skip_await(serving: Rendered) -> None:
    services = [o for o in serving.namespaced if o["kind"] == "Service"]
    lbs = [s for s in services if s["spec"].get("type") == "LoadBalancer"]
    assert [s["metadata"]["name"] for s in lbs] == ["kourier"]
    assert len(services) > len(lbs)
    for svc in services:
        annotations = svc["metadata"].get("annotations") or {}
        assert annotations.get(SKIP_AWAIT_ANNOTATION) == "true"
    deployments = [o for o in serving.namespaced if o["kind"] == "Deployment"]
    for dep in deployments:
        annotations = dep["metadata"].get("annotations") or {}
        assert SKIP_AWAIT_ANNOTATION not in annotations


def test_crds_are_separated_and_deduped(serving: Rendered) -> None:
    # serving-crds.yaml and serving-core.yaml both carry the 12 CRDs
    assert len(serving.crds) == 12
    assert {o["kind"] for o in serving.crds} == {"CustomResourceDefinition"}
    assert not [o for o in serving.cluster_scoped if o["kind"] == "CustomResourceDefinition"]
    assert not [o for o in serving.namespaced if o["kind"] == "CustomResourceDefinition"]
    assert {o["kind"] for o in serving.cluster_scoped} == {
        "ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration"}


def test_no_duplicates_and_counts(serving: Rendered) -> None:
    docs = _docs("serving")
    keys = [manifests.object_key(o) for o in _all(serving)]
    assert len(keys) == len(set(keys))
    namespaces = sum(1 for d in docs if d["kind"] == "Namespace")
    assert len(keys) == len(docs) - 12 - namespaces


def test_every_object_is_labelled(serving: Rendered) -> None:
    for obj in _all(serving):
        labels = obj["metadata"]["labels"]
        assert labels[MANAGED_BY_LABEL] == "knative-fleet"
        assert labels[CR_NAME_LABEL] == "knative-serving"
        assert labels[NAME_LABEL] == "knative-serving"  # the operator's InjectLabel


def test_jobs_get_the_operators_versioned_names(serving: Rendered) -> None:
    jobs = [o for o in serving.namespaced if o["kind"] == "Job"]
    assert sorted(j["metadata"]["name"] for j in jobs) == [
        "cleanup-serving-serving-1.23.0", "storage-version-migration-serving-serving-1.23.0"]
    for job in jobs:
        assert "generateName" not in job["metadata"]
        assert job["metadata"]["annotations"][SKIP_AWAIT_ANNOTATION] == "true"
        # The operator's JobTransform keeps an Istio sidecar out of the Job's pods.
        assert job["spec"]["template"]["metadata"]["labels"][
            manifests.ISTIO_INJECT_LABEL] == "false"


def test_render_does_not_touch_the_cached_documents(serving: Rendered) -> None:
    url = releases.release_urls(BASE, "serving", "1.23")[3]
    gateway = _find(list(release_fetch.load_documents(url)), "Deployment",
                    "3scale-kourier-gateway")
    assert gateway["metadata"]["namespace"] == "kourier-system"
    assert MANAGED_BY_LABEL not in gateway["metadata"]["labels"]


def test_serving_order_is_kept(serving: Rendered) -> None:
    names = [o["metadata"]["name"] for o in serving.namespaced if o["kind"] == "Deployment"]
    assert names == ["activator", "autoscaler", "controller", "webhook", "autoscaler-hpa",
                     "net-kourier-controller", "3scale-kourier-gateway"]


# --- other ingresses --------------------------------------------------------------------

def test_istio_local_gateway_stays_in_istio_system() -> None:
    rendered = manifests.render(
        _docs("serving", "istio"), namespace=SERVING_NS, cr_name="knative-serving",
        component="serving")
    assert rendered.namespaces_dropped == [SERVING_NS]
    assert {o["metadata"]["namespace"] for o in rendered.namespaced} == {SERVING_NS}
    (gateway,) = rendered.external
    assert (gateway["kind"], gateway["metadata"]["name"]) == ("Service", "knative-local-gateway")
    assert gateway["metadata"]["namespace"] == "istio-system"
    assert "ownerReferences" not in gateway["metadata"]
    # net-istio's built-in default points at istio-system, where the Service stays
    config = _find(rendered.namespaced, "ConfigMap", "config-istio")["data"]
    assert "knative-local-gateway.istio-system.svc" in config["_example"]


@pytest.mark.parametrize("ingress", ["contour", "gateway-api"])
def test_other_ingresses_render_into_knative_serving(ingress: str) -> None:
    rendered = manifests.render(
        _docs("serving", ingress), namespace=SERVING_NS, cr_name="knative-serving",
        component="serving")
    assert rendered.external == []
    assert {o["metadata"]["namespace"] for o in rendered.namespaced} == {SERVING_NS}


# --- Eventing 1.23 ----------------------------------------------------------------------

def test_eventing(eventing: Rendered) -> None:
    assert eventing.namespaces_dropped == [EVENTING_NS]
    assert {o["metadata"]["namespace"] for o in eventing.namespaced} == {EVENTING_NS}
    assert len(eventing.crds) == 18  # 17 core (twice) + InMemoryChannel
    assert eventing.external == []
    kinds = Counter(o["kind"] for o in eventing.namespaced)
    assert kinds["Deployment"] == 9 and kinds["StatefulSet"] == 1
    assert not [o for o in _all(eventing) if o["apiVersion"].startswith("cert-manager.io")]
    (job,) = [o for o in eventing.namespaced if o["kind"] == "Job"]
    assert job["metadata"]["name"] == "storage-version-migration-eventing-eventing-1.23.0"
    keys = [manifests.object_key(o) for o in _all(eventing)]
    assert len(keys) == len(set(keys))


# --- transforms on small inputs ---------------------------------------------------------

def _obj(api: str, kind: str, name: str, ns: str | None = None, **body: object) -> dict:
    meta: dict = {"name": name}
    if ns is not None:
        meta["namespace"] = ns
    return {"apiVersion": api, "kind": kind, "metadata": meta, **body}


def _render(docs: list[dict], ns: str = "install") -> Rendered:
    return manifests.render(docs, namespace=ns, cr_name="cr", component="serving")


def test_references_to_a_moved_namespace_are_rewritten() -> None:
    service_ref = {"service": {"name": "hook", "namespace": "old", "path": "/"}}
    docs = [
        _obj("v1", "Namespace", "old"),
        _obj("v1", "Service", "hook", "old", spec={"selector": {"app": "x"}}),
        _obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "crb",
             subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "old"},
                       {"kind": "ServiceAccount", "name": "o", "namespace": "kube-system"}]),
        _obj("rbac.authorization.k8s.io/v1", "RoleBinding", "rb", "old",
             subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "old"}]),
        _obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "vwc",
             webhooks=[{"name": "v.x", "clientConfig": copy.deepcopy(service_ref)}]),
        _obj("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mwc",
             webhooks=[{"name": "m.x", "clientConfig": copy.deepcopy(service_ref)}]),
        _obj("apiregistration.k8s.io/v1", "APIService", "v1.x",
             spec={"service": {"name": "hook", "namespace": "old"}}),
        _obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "things.x",
             spec={"scope": "Namespaced", "names": {"kind": "Thing"},
                   "conversion": {"strategy": "Webhook",
                                  "webhook": {"clientConfig": copy.deepcopy(service_ref)}}}),
        _obj("v1", "ConfigMap", "cfg", "install", data={
            "gateway": "gw.old.svc.cluster.local",
            "short": "ctl.old:18000",
            "ref": "old/secret",
            "exact": "old",
            "other": "golden.old-ish.example.com oldish/x",
            "_example": "ns: old",
        }),
        _obj("apps/v1", "Deployment", "ctl", "install", spec={"template": {"spec": {
            "containers": [{"name": "c", "env": [
                {"name": "GATEWAY_NAMESPACE", "value": "old"},
                {"name": "UNRELATED", "value": "older"},
                {"name": "FROM", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            ]}]}}}),
    ]
    before = copy.deepcopy(docs)
    rendered = _render(docs)
    assert docs == before
    assert rendered.namespaces_dropped == ["old"]
    assert {o["metadata"]["namespace"] for o in rendered.namespaced} == {"install"}
    cs = rendered.cluster_scoped
    assert _find(cs, "ClusterRoleBinding", "crb")["subjects"][1]["namespace"] == "kube-system"
    assert _find(cs, "APIService", "v1.x")["spec"]["service"]["namespace"] == "install"
    hook = _find(cs, "ValidatingWebhookConfiguration", "vwc")["webhooks"][0]["clientConfig"]
    assert hook["service"] == {"name": "hook", "namespace": "install", "path": "/"}
    conversion = rendered.crds[0]["spec"]["conversion"]["webhook"]["clientConfig"]
    assert conversion["service"]["namespace"] == "install"
    data = _find(rendered.namespaced, "ConfigMap", "cfg")["data"]
    assert data == {
        "gateway": "gw.install.svc.cluster.local",
        "short": "ctl.install:18000",
        "ref": "install/secret",
        "exact": "install",
        "other": "golden.old-ish.example.com oldish/x",
        "_example": "ns: old",
    }
    env = _find(rendered.namespaced, "Deployment", "ctl")["spec"]["template"]["spec"][
        "containers"][0]["env"]
    assert [e.get("value") for e in env] == ["install", "older", None]


def test_namespace_defaults_and_cluster_scope() -> None:
    rendered = _render([
        _obj("v1", "ConfigMap", "no-ns"),
        _obj("rbac.authorization.k8s.io/v1", "ClusterRole", "cr", "stray"),
        _obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.x",
             spec={"scope": "Cluster", "names": {"kind": "Widget"}}),
        _obj("x/v1", "Widget", "w", "stray"),
        _obj("networking.k8s.io/v1", "IngressClass", "ic"),
        _obj("caching.internal.knative.dev/v1alpha1", "Image", "img"),
    ])
    assert [manifests.object_key(o) for o in rendered.namespaced] == [
        "v1/ConfigMap:install/no-ns",
        "caching.internal.knative.dev/v1alpha1/Image:install/img",
    ]
    assert [manifests.object_key(o) for o in rendered.cluster_scoped] == [
        "rbac.authorization.k8s.io/v1/ClusterRole:/cr",
        "x/v1/Widget:/w",
        "networking.k8s.io/v1/IngressClass:/ic",
    ]


def test_dedupe_keeps_last_content_at_first_position() -> None:
    rendered = _render([
        _obj("v1", "ConfigMap", "a", "install", data={"v": "1"}),
        _obj("v1", "ConfigMap", "b", "install"),
        _obj("v1", "ConfigMap", "a", "install", data={"v": "2"}),
        # same group and name, another version: the same object
        _obj("autoscaling/v1", "HorizontalPodAutoscaler", "h", "install"),
        _obj("autoscaling/v2", "HorizontalPodAutoscaler", "h", "install"),
        # same kind and name, other group: another object
        _obj("networking.internal.knative.dev/v1alpha1", "Certificate", "c", "install"),
        _obj("cert-manager.io/v1", "Certificate", "c", "install"),
    ])
    assert [(o["metadata"]["name"], o.get("data")) for o in rendered.namespaced[:2]] == [
        ("a", {"v": "2"}), ("b", None)]
    assert [o["apiVersion"] for o in rendered.namespaced[2:]] == [
        "autoscaling/v2", "networking.internal.knative.dev/v1alpha1", "cert-manager.io/v1"]


def test_a_move_that_collides_is_an_error() -> None:
    with pytest.raises(ReleaseError, match="collides"):
        _render([
            _obj("v1", "ConfigMap", "cfg", "install"),
            _obj("v1", "ConfigMap", "cfg", "elsewhere"),
        ])


def test_jobs_without_version_label_use_the_given_version() -> None:
    rendered = manifests.render(
        [{"apiVersion": "batch/v1", "kind": "Job",
          "metadata": {"generateName": "migrate-", "namespace": "install"}},
         _obj("batch/v1", "Job", "named", "install")],
        namespace="install", cr_name="cr", component="eventing", version="1.23.0")
    assert [o["metadata"]["name"] for o in rendered.namespaced] == [
        "migrate-eventing-1.23.0", "named-eventing-1.23.0"]


# --- anchor, owner, identity ------------------------------------------------------------

def test_anchor_name() -> None:
    assert (anchor_name("KnativeServing", "knative-serving")
            == "knativeserving-knative-serving-root-owner")
    assert (anchor_name("KnativeEventing", "ke")
            == "knativeeventing-ke-root-owner")


def test_anchor_configmap() -> None:
    anchor = manifests.anchor_configmap("KnativeServing", "knative-serving", SERVING_NS)
    description = anchor["metadata"]["annotations"].pop("operator.knative.dev/description")
    assert anchor == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "knativeserving-knative-serving-root-owner",
            "namespace": SERVING_NS,
            "labels": {
                "app.kubernetes.io/managed-by": "knative-fleet",
                "operator.knative.dev/cr-name": "knative-serving",
            },
            "annotations": {
                "operator.knative.dev/anchor": "true",
                "operator.knative.dev/protected": "true",
            },
        },
    }
    assert "garbage-collect" in description and "fleet stack" in description
    assert MANAGED_BY_VALUE == "knative-fleet"


def test_owner_reference_and_with_owner(serving: Rendered) -> None:
    ref = manifests.owner_reference("knativeserving-knative-serving-root-owner", "uid-1")
    assert ref == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "knativeserving-knative-serving-root-owner",
        "uid": "uid-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    obj = _obj("v1", "ConfigMap", "c", "install")
    obj["metadata"]["ownerReferences"] = [{"kind": "Other"}]
    owned = manifests.with_owner(obj, ref)
    assert owned["metadata"]["ownerReferences"] == [ref]
    assert obj["metadata"]["ownerReferences"] == [{"kind": "Other"}]
    with pytest.raises(ValueError, match="cluster-scoped"):
        manifests.with_owner(serving.cluster_scoped[0], ref)


@pytest.mark.parametrize(
    ("api", "kind", "token"),
    [
        ("v1", "ConfigMap", "kubernetes:core/v1:ConfigMap"),
        ("apps/v1", "Deployment", "kubernetes:apps/v1:Deployment"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition",
         "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"),
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
         "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole",
         "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"),
        ("policy/v1", "PodDisruptionBudget", "kubernetes:policy/v1:PodDisruptionBudget"),
        ("autoscaling/v2", "HorizontalPodAutoscaler",
         "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"),
        ("batch/v1", "Job", "kubernetes:batch/v1:Job"),
        ("networking.k8s.io/v1", "IngressClass", "kubernetes:networking.k8s.io/v1:IngressClass"),
        ("caching.internal.knative.dev/v1alpha1", "Image",
         "kubernetes:caching.internal.knative.dev/v1alpha1:Image"),
    ],
)
def test_resource_type_token(api: str, kind: str, token: str) -> None:
    assert manifests.resource_type_token({"apiVersion": api, "kind": kind}) == token


def test_type_tokens_match_pulumi_kubernetes(serving: Rendered, eventing: Rendered) -> None:
    """Every built-in kind we emit has a pulumi-kubernetes class with the same token."""
    spec = importlib.util.find_spec("pulumi_kubernetes")
    assert spec is not None and spec.origin is not None
    package = Path(spec.origin).parent
    seen = {(o["apiVersion"], o["kind"]) for o in [*_all(serving), *_all(eventing)]}
    checked = 0
    for api, kind in sorted(seen):
        group, _, version = api.rpartition("/")
        if group.endswith("knative.dev"):
            continue  # CRD-defined: CustomResource builds the token from apiVersion
        source = package / (group.split(".")[0] or "core") / version / f"{kind}.py"
        token = manifests.resource_type_token({"apiVersion": api, "kind": kind})
        assert f'type_token("{token}")' in source.read_text(), (api, kind)
        checked += 1
    assert checked >= 12


def test_object_key() -> None:
    assert manifests.object_key(_obj("apps/v1", "Deployment", "activator", SERVING_NS)) == (
        "apps/v1/Deployment:knative-serving/activator")
    assert manifests.object_key(_obj("v1", "ConfigMap", "c", "ns")) == "v1/ConfigMap:ns/c"
    assert manifests.object_key(_obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r")) == (
        "rbac.authorization.k8s.io/v1/ClusterRole:/r")


def test_an_empty_rule_list_is_not_applied() -> None:
    # The server stores none, so `rules: []` would differ from the live object forever.
    docs = [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": "empty"}, "rules": []},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": "full"}, "rules": [{"verbs": ["get"]}]}]
    out = manifests.render(docs, namespace="knative-eventing", cr_name="knative-eventing",
                           component="eventing")
    roles = {o["metadata"]["name"]: o for o in out.cluster_scoped}
    assert "rules" not in roles["empty"]
    assert roles["full"]["rules"] == [{"verbs": ["get"]}]

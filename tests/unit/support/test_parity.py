"""The parity comparison's own logic: what counts as a difference, what a listed one
explains, and the release base built from the operator's kodata."""

from __future__ import annotations

from pathlib import Path

from lab.operator import cr, crd_without_conversion, ready
from tests.support import parity
from tests.support.parity import Field, Known

DEP = ("apps/Deployment", "knative-serving", "controller")
SVC = ("/Service", "knative-serving", "controller")


def test_install_objects_are_the_new_ones_less_what_controllers_make() -> None:
    after = {DEP: {}, SVC: {}, ("/Pod", "knative-serving", "controller-x"): {},
             ("/Namespace", "", "default"): {}}
    assert set(parity.install_objects(after, {("/Namespace", "", "default")})) == {DEP, SVC}


def test_normalize_drops_what_the_server_fills_in() -> None:
    obj = {"metadata": {"name": "controller", "uid": "u", "resourceVersion": "1",
                        "managedFields": [], "annotations": {
                            "deployment.kubernetes.io/revision": "1"},
                        "labels": {"app": "controller"}},
           "spec": {"replicas": 1}, "status": {"x": 1}}
    assert parity.normalize(DEP, obj) == {"metadata": {"name": "controller",
                                                       "labels": {"app": "controller"}},
                                          "spec": {"replicas": 1}}
    svc = {"metadata": {"name": "controller"},
           "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "type": "ClusterIP"}}
    assert parity.normalize(SVC, svc)["spec"] == {"type": "ClusterIP"}


def test_normalize_drops_what_each_cluster_s_knative_webhook_writes() -> None:
    hook = ("admissionregistration.k8s.io/ValidatingWebhookConfiguration", "", "v.x.dev")
    config = {"metadata": {"name": "v.x.dev"}, "webhooks": [{
        "name": "v.x.dev", "rules": [{"resources": ["services"]}],
        "clientConfig": {"caBundle": "Q0E=", "service": {"name": "webhook"}}}]}
    assert parity.normalize(hook, config)["webhooks"] == [{
        "name": "v.x.dev", "rules": [{"resources": ["services"]}],
        "clientConfig": {"service": {"name": "webhook"}}}]
    crd = {"metadata": {"name": "pingsources.sources.knative.dev"}, "spec": {
        "group": "sources.knative.dev", "conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"caBundle": "Q0E=", "service": {"name": "eventing-webhook"}}}}}}
    key = (parity.CRD, "", "pingsources.sources.knative.dev")
    assert parity.normalize(key, crd)["spec"] == {
        "group": "sources.knative.dev", "conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": "eventing-webhook"}}}}}
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == "Q0E="
    certs = {"metadata": {"name": "webhook-certs"},
             "data": {"ca-cert.pem": "x", "server-cert.pem": "y", "server-key.pem": "z"}}
    secret = ("/Secret", "knative-serving", "webhook-certs")
    assert parity.normalize(secret, certs) == {"metadata": {"name": "webhook-certs"}}
    other = {"metadata": {"name": "keys"}, "data": {"server-key.pem": "z", "token": "t"}}
    digests = parity.normalize(("/Secret", "ns", "keys"), other)["data"]
    assert set(digests) == {"server-key.pem", "token"}
    assert all(v.startswith("sha256:") and v[7:] not in ("z", "t") for v in digests.values())


def test_normalize_drops_allocated_node_ports_and_keeps_the_ones_a_writer_set() -> None:
    owned = {"f:spec": {"f:type": {}, "f:ports": {
        ".": {}, 'k:{"port":443,"protocol":"TCP"}': {"f:nodePort": {}, "f:port": {}},
        'k:{"port":80,"protocol":"TCP"}': {"f:port": {}}}}}
    svc = {"metadata": {"name": "kourier", "managedFields": [
               {"manager": "knative-fleet", "fieldsV1": owned}]},
           "spec": {"type": "LoadBalancer", "healthCheckNodePort": 30756,
                    "ports": [{"name": "http2", "port": 80, "protocol": "TCP",
                               "nodePort": 31917},
                              {"name": "https", "port": 443, "protocol": "TCP",
                               "nodePort": 31443}]}}
    assert parity.normalize(SVC, svc)["spec"] == {
        "type": "LoadBalancer",
        "ports": [{"name": "http2", "port": 80, "protocol": "TCP"},
                  {"name": "https", "port": 443, "protocol": "TCP", "nodePort": 31443}]}
    owned["f:spec"]["f:healthCheckNodePort"] = {}
    assert parity.normalize(SVC, svc)["spec"]["healthCheckNodePort"] == 30756
    # Without managedFields no writer is known to have set them: all allocated.
    bare = {"metadata": {"name": "x"}, "spec": {"ports": [{"port": 1, "nodePort": 30001}]}}
    assert parity.normalize(SVC, bare)["spec"] == {"ports": [{"port": 1}]}


def test_normalize_drops_job_selectors_and_their_labels() -> None:
    job = {"metadata": {"name": "j", "labels": {"controller-uid": "u", "app": "j"}},
           "spec": {"selector": {"matchLabels": {"controller-uid": "u"}},
                    "template": {"metadata": {"labels": {
                        "batch.kubernetes.io/controller-uid": "u", "app": "j"}}}}}
    out = parity.normalize(("batch/Job", "ns", "j"), job)
    assert out == {"metadata": {"name": "j", "labels": {"app": "j"}},
                   "spec": {"template": {"metadata": {"labels": {"app": "j"}}}}}


def test_differences_name_each_field_and_each_one_sided_object() -> None:
    op = {DEP: {"spec": {"replicas": 2, "template": {"containers": [{"image": "a"}]}}},
          SVC: {"spec": {}}}
    fl = {DEP: {"spec": {"replicas": 2, "template": {"containers": [{"image": "b"}]}},
                "metadata": {"labels": {"x": "y"}}}}
    found = parity.differences(op, fl)
    assert found == [
        Field(SVC, "", "present", None),
        Field(DEP, "metadata.labels.x", None, "y"),
        Field(DEP, "spec.template.containers[0].image", "a", "b"),
    ]


def test_lists_of_other_lengths_differ_as_a_whole() -> None:
    found = parity.differences({DEP: {"a": [1, 2]}}, {DEP: {"a": [1]}})
    assert found == [Field(DEP, "a", [1, 2], [1])]


def test_a_known_difference_explains_only_what_its_patterns_match() -> None:
    known = Known("apps/*", "knative-serving/*", "metadata.labels.*", "row", "text", "why")
    hit = Field(DEP, "metadata.labels.x", None, "y")
    miss = Field(SVC, "metadata.labels.x", None, "y")
    assert parity.unexplained([hit, miss], [known]) == [miss]
    assert parity.unused([miss], [known]) == [known]
    assert parity.unused([hit], [known]) == []
    cluster = Known("rbac*/ClusterRole", "knative-*", "", "row", "text", "why")
    assert cluster.matches(Field(("rbac.authorization.k8s.io/ClusterRole", "", "knative-x"),
                                 "", "present", None))


def test_an_entry_about_some_installs_explains_and_goes_stale_only_there() -> None:
    istio = Known("apps/*", "knative-serving/*", "metadata.labels.*", "row", "text", "why",
                  installs=frozenset({"istio"}))
    every = Known("apps/*", "*", "spec.*", "row", "text", "why")
    hit = Field(DEP, "metadata.labels.x", None, "y")
    assert parity.unexplained([hit], [istio], "kourier") == [hit]
    assert parity.unexplained([hit], [istio], "istio") == []
    assert parity.unused([], [istio, every], "kourier") == [every]
    assert parity.unused([], [istio, every], "istio") == [istio, every]
    assert parity.unused([hit], [istio], "istio") == []


def _kodata(root: Path) -> Path:
    k = root / "kodata"
    for name in parity.SERVING_FILES:
        (k / "knative-serving" / "1.21.1").mkdir(parents=True, exist_ok=True)
        (k / "knative-serving" / "1.21.1" / name).write_text("kind: X\n")
    for name in parity.EVENTING_FILES:
        (k / "knative-eventing" / "1.21.0").mkdir(parents=True, exist_ok=True)
        (k / "knative-eventing" / "1.21.0" / name).write_text("kind: X\n")
    (k / "ingress" / "1.21" / "kourier").mkdir(parents=True)
    (k / "ingress" / "1.21" / "kourier" / "kourier.yaml").write_text(
        "metadata:\n  labels:\n    app.kubernetes.io/version: \"1.21.0\"\n")
    (k / "eventing-source" / "1.21" / "github").mkdir(parents=True)
    (k / "eventing-source" / "1.21" / "github" / "github.yaml").write_text(
        "metadata:\n  labels:\n    contrib.eventing.knative.dev/release: \"v1.21.2\"\n")
    (k / "eventing-source" / "1.21" / "ceph").mkdir(parents=True)
    (k / "eventing-source" / "1.21" / "ceph" / "ceph.yaml").write_text("kind: X\n")
    return k


def test_mirror_from_kodata_has_github_layout(tmp_path: Path) -> None:
    kodata = _kodata(tmp_path)
    base = parity.mirror_from_kodata(kodata, tmp_path / "base", "1.21.1", "1.21.0")
    dl = "releases/download"
    core = base / "knative/serving" / dl / "knative-v1.21.1/serving-core.yaml"
    assert core.resolve() == (kodata / "knative-serving/1.21.1/2-serving-core.yaml").resolve()
    assert (base / "knative/eventing" / dl / "knative-v1.21.0/eventing-post-install.yaml").exists()
    assert (base / "knative-extensions/net-kourier" / dl / "knative-v1.21.0/kourier.yaml").exists()
    # a companion keeps its own patch number
    github = base / "knative-extensions/eventing-github" / dl / "knative-v1.21.2/github.yaml"
    assert github.exists()
    # no label at all: the minor's .0
    ceph = base / "knative-extensions/eventing-ceph" / dl / "knative-v1.21.0/ceph.yaml"
    assert ceph.exists()


def test_operator_crds_lose_only_their_conversion_webhook() -> None:
    crd = {"kind": "CustomResourceDefinition", "metadata": {"name": "x"},
           "spec": {"group": "g", "conversion": {"strategy": "Webhook"}, "versions": []}}
    assert crd_without_conversion(crd) == {"kind": "CustomResourceDefinition",
                                          "metadata": {"name": "x"},
                                          "spec": {"group": "g", "versions": []}}
    assert crd["spec"]["conversion"]  # the input is left alone


def test_cr_and_ready() -> None:
    obj = cr("KnativeServing", "knative-serving", {"version": "1.21.1"})
    assert obj["metadata"] == {"name": "knative-serving", "namespace": "knative-serving"}
    assert not ready(obj)
    obj["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    assert ready(obj)

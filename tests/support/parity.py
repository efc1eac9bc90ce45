"""Holding one install against another, object by object and field by field: what the
Knative Operator wrote on one spoke against what knative-fleet wrote on another.

An install is every object that appeared on a spoke during it (a snapshot before, one
after), less what controllers make from it (Pods, ReplicaSets, ...). Fields that the
cluster fills in (uids, times, allocated IPs and node ports, Job selectors) are left out of both;
everything else must be equal or be explained by an entry of a list of known
differences, each with its reason and the spec-table row (docs/configuration.md) that
states it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

Key = tuple[str, str, str]  # (group/Kind, namespace, name)

# Objects controllers make from an install, or the cluster churns: not written by either.
DERIVED_KINDS = {
    "/Pod", "apps/ReplicaSet", "apps/ControllerRevision", "/Event", "events.k8s.io/Event",
    "coordination.k8s.io/Lease", "/Endpoints", "discovery.k8s.io/EndpointSlice",
    "apiregistration.k8s.io/APIService", "networking.k8s.io/IPAddress",
}
# Objects the cluster's own controllers put into every namespace.
DERIVED_OBJECTS = {("/ConfigMap", "kube-root-ca.crt"), ("/ServiceAccount", "default")}
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation",
                   "managedFields", "selfLink")
SERVER_ANNOTATIONS = ("deployment.kubernetes.io/revision",)
# What Knative's webhook writes into the objects an install applies, different on every
# cluster: its CA in each webhook's clientConfig and in each conversion webhook of a CRD,
# and its certificates in its Secret.
WEBHOOK_CONFIGURATIONS = ("admissionregistration.k8s.io/ValidatingWebhookConfiguration",
                          "admissionregistration.k8s.io/MutatingWebhookConfiguration")
WEBHOOK_CERTIFICATES = frozenset({"ca-cert.pem", "server-cert.pem", "server-key.pem"})
CRD = "apiextensions.k8s.io/CustomResourceDefinition"
SERVER_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name",
                 "batch.kubernetes.io/job-name")


def install_objects(after: Mapping[Key, dict], before: Iterable[Key]) -> dict[Key, dict]:
    """The objects of `after` that were not there `before`, less derived kinds."""
    seen = set(before)
    return {k: v for k, v in after.items() if k not in seen and k[0] not in DERIVED_KINDS
            and (k[0], k[2]) not in DERIVED_OBJECTS}


def normalize(key: Key, obj: dict) -> dict:
    """The object as its writer wrote it: status and what the server fills in removed."""
    obj = {k: v for k, v in obj.items() if k != "status"}
    raw_meta = obj.get("metadata")
    meta = {k: v for k, v in (raw_meta or {}).items() if k not in SERVER_METADATA}
    for field, drop in (("annotations", SERVER_ANNOTATIONS), ("labels", SERVER_LABELS)):
        kept = {k: v for k, v in (meta.get(field) or {}).items() if k not in drop}
        if kept:
            meta[field] = kept
        else:
            meta.pop(field, None)
    obj["metadata"] = meta
    if key[0] in WEBHOOK_CONFIGURATIONS:
        obj["webhooks"] = [
            {**w, "clientConfig": {k: v for k, v in (w.get("clientConfig") or {}).items()
                                   if k != "caBundle"}}
            for w in obj.get("webhooks") or []]
    if key[0] == CRD:
        obj = _without_conversion_ca(obj)
    if key[0] == "/Secret" and obj.get("data") and set(obj["data"]) <= WEBHOOK_CERTIFICATES:
        obj.pop("data")
    if key[0] == "/Secret" and obj.get("data"):
        # Compared by digest, so a difference never prints a secret.
        obj["data"] = {k: "sha256:" + hashlib.sha256(str(v).encode()).hexdigest()[:16]
                       for k, v in obj["data"].items()}
    spec = obj.get("spec")
    if key[0] == "/Service" and isinstance(spec, dict):
        spec = _written_service_spec(spec, (raw_meta or {}).get("managedFields") or [])
        obj["spec"] = spec
    if key[0] == "batch/Job" and isinstance(spec, dict):
        spec = {k: v for k, v in spec.items() if k != "selector"}
        template = dict(spec.get("template") or {})
        tmeta = dict(template.get("metadata") or {})
        labels = {k: v for k, v in (tmeta.get("labels") or {}).items() if k not in SERVER_LABELS}
        tmeta["labels"] = labels
        template["metadata"] = tmeta
        spec["template"] = template
        obj["spec"] = spec
    return obj


def _without_conversion_ca(crd: dict) -> dict:
    """The CRD without the CA its conversion webhook's writer put into `clientConfig`."""
    webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook")
    if not isinstance(webhook, dict) or "caBundle" not in (webhook.get("clientConfig") or {}):
        return crd
    config = {k: v for k, v in webhook["clientConfig"].items() if k != "caBundle"}
    conversion = {**crd["spec"]["conversion"], "webhook": {**webhook, "clientConfig": config}}
    return {**crd, "spec": {**crd["spec"], "conversion": conversion}}


def _owned_service_fields(managed_fields: list[dict]) -> tuple[set[str], set[str]]:
    """({spec field}, {port key}) of the Service spec fields and `spec.ports[]` entries
    whose `nodePort` some writer (any field manager) set: what the API server allocated
    is in no manager's set."""
    fields: set[str] = set()
    node_ports: set[str] = set()
    for entry in managed_fields:
        spec = ((entry.get("fieldsV1") or {}).get("f:spec") or {})
        fields |= {k.removeprefix("f:") for k in spec if k.startswith("f:")}
        for port_key, port in (spec.get("f:ports") or {}).items():
            if port_key.startswith("k:") and "f:nodePort" in (port or {}):
                node_ports.add(port_key)
    return fields, node_ports


def _port_key(port: dict) -> str:
    """A `spec.ports[]` entry's key as managedFields writes it (`k:{"port":80,...}`)."""
    return "k:" + json.dumps({"port": port.get("port"), "protocol": port.get("protocol", "TCP")},
                             separators=(",", ":"))


def _written_service_spec(spec: dict, managed_fields: list[dict]) -> dict:
    """A Service spec less what the API server allocates: cluster IPs always; the
    `nodePort` of a port and the `healthCheckNodePort` only when no writer set them
    (a NodePort or LoadBalancer Service gets them allocated unless its spec fixes them;
    one the spec fixes is compared like any field)."""
    spec = {k: v for k, v in spec.items() if k not in ("clusterIP", "clusterIPs")}
    fields, node_ports = _owned_service_fields(managed_fields)
    if "healthCheckNodePort" not in fields:
        spec.pop("healthCheckNodePort", None)
    if isinstance(spec.get("ports"), list):
        spec["ports"] = [
            p if not isinstance(p, dict) or "nodePort" not in p or _port_key(p) in node_ports
            else {k: v for k, v in p.items() if k != "nodePort"}
            for p in spec["ports"]]
    return spec


@dataclass(frozen=True)
class Field:
    """One difference: where, and the two values (None where a side lacks it)."""

    key: Key
    path: str
    operator: object
    fleet: object

    def __str__(self) -> str:
        kind, ns, name = self.key
        where = f"{kind} {ns}/{name}" if ns else f"{kind} {name}"
        return f"{where} {self.path}: operator={self.operator!r} fleet={self.fleet!r}"


MISSING = None


def _walk(a: object, b: object, path: str) -> Iterable[tuple[str, object, object]]:
    """Leaf paths that differ; a mapping one side lacks is walked as empty, so each of its
    keys is its own difference."""
    if isinstance(a, dict) and b is MISSING:
        b = {}
    if isinstance(b, dict) and a is MISSING:
        a = {}
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from _walk(a.get(k, MISSING), b.get(k, MISSING), f"{path}.{k}" if path else k)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _walk(x, y, f"{path}[{i}]")
    elif a != b:
        yield path, a, b


def differences(operator: Mapping[Key, dict], fleet: Mapping[Key, dict]) -> list[Field]:
    """Every field that differs between two installs (both already normalized); an object
    only one side has is one difference with path "" and the other side None."""
    out: list[Field] = []
    for key in sorted(set(operator) | set(fleet)):
        if key not in fleet:
            out.append(Field(key, "", "present", MISSING))
        elif key not in operator:
            out.append(Field(key, "", MISSING, "present"))
        else:
            out.extend(Field(key, p, x, y) for p, x, y in _walk(operator[key], fleet[key], ""))
    return out


@dataclass(frozen=True)
class Known:
    """A difference knative-fleet keeps on purpose (or cannot avoid), with its reason.

    `kind`, `name` and `path` are fnmatch patterns over a Field's group/Kind, its
    "namespace/name" (or name; alternatives joined by "|") and its path (a literal "["
    is written "[[]"); `row` is the spec-table row (docs/configuration.md) whose last
    column states `readme` (tests/unit/support/test_operator_differences.py checks it).
    `installs` names the parity installs the entry is about (None: every one): it
    explains differences only there, and must explain one in each of them."""

    kind: str
    name: str
    path: str
    row: str
    readme: str
    reason: str
    # The operator's own result varies from one look to the next (it applies two copies
    # of the object on every reconcile): the entry may explain nothing on a given run.
    varies: bool = False
    installs: frozenset[str] | None = None

    def applies_to(self, install: str | None) -> bool:
        """Whether the entry is about `install` (None: any install)."""
        return install is None or self.installs is None or install in self.installs

    def matches(self, f: Field) -> bool:
        kind, ns, name = f.key
        where = f"{ns}/{name}" if ns else name
        return (fnmatch.fnmatchcase(kind, self.kind)
                and any(fnmatch.fnmatchcase(where, p) for p in self.name.split("|"))
                and fnmatch.fnmatchcase(f.path, self.path))


def unexplained(found: Iterable[Field], known: Iterable[Known],
                install: str | None = None) -> list[Field]:
    """The differences no entry about `install` explains."""
    known = [k for k in known if k.applies_to(install)]
    return [f for f in found if not any(k.matches(f) for k in known)]


def unused(found: Iterable[Field], known: Iterable[Known],
           install: str | None = None) -> list[Known]:
    """Entries about `install` that explain nothing in it: a fixed difference whose entry
    must go (or an install the entry no longer applies to)."""
    found = list(found)
    return [k for k in known if k.applies_to(install) and not k.varies
            and not any(k.matches(f) for f in found)]


# kodata layout of the operator -> GitHub's release download layout (what releaseBase reads)
SERVING_FILES = {"1-serving-crds.yaml": "serving-crds.yaml",
                 "2-serving-core.yaml": "serving-core.yaml",
                 "3-serving-hpa.yaml": "serving-hpa.yaml",
                 "4-serving-post-install-jobs.yaml": "serving-post-install-jobs.yaml"}
EVENTING_FILES = {"1-eventing-crds.yaml": "eventing-crds.yaml",
                  "2-eventing-core.yaml": "eventing-core.yaml",
                  "3-eventing-tls-networking.yaml": "eventing-tls-networking.yaml",
                  "4-in-memory-channel.yaml": "in-memory-channel.yaml",
                  "5-mt-channel-broker.yaml": "mt-channel-broker.yaml",
                  "6-eventing-post-install.yaml": "eventing-post-install.yaml"}
# kodata ingress/<minor>/<name>/, eventing-source/<minor>/<name>/ -> knative-extensions repo
COMPANION_REPOS = {"kourier": "net-kourier", "istio": "net-istio", "contour": "net-contour",
                   "kafka": "eventing-kafka-broker", "rabbitmq": "eventing-rabbitmq",
                   "redis": "eventing-redis", "github": "eventing-github",
                   "gitlab": "eventing-gitlab", "ceph": "eventing-ceph"}


_VERSION_LABEL = re.compile(
    r'(?:app\.kubernetes\.io/version|[\w.]+/release):\s*"?v?([0-9]+\.[0-9]+\.[0-9]+)')


def _release_version(files: Iterable[Path], minor: str) -> str:
    """The patch version the release files carry in their version or release label
    (companions are released with their own patch numbers); `minor`.0 when none does."""
    for path in files:
        found = _VERSION_LABEL.search(path.read_text())
        if found:
            return found.group(1)
    return f"{minor}.0"


def mirror_from_kodata(kodata: Path, dest: Path, serving: str, eventing: str) -> Path:
    """A release base (GitHub's layout, symlinks into `kodata`) holding exactly the files
    the operator installs for Serving `serving` and Eventing `eventing`, so both products
    install from the same bytes. Returns `dest`."""
    def link(src: Path, repo: str, version: str, name: str) -> None:
        target = dest / repo / "releases" / "download" / f"knative-v{version}" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(src)

    for kodata_name, name in SERVING_FILES.items():
        link(kodata / "knative-serving" / serving / kodata_name, "knative/serving", serving, name)
    for kodata_name, name in EVENTING_FILES.items():
        link(kodata / "knative-eventing" / eventing / kodata_name, "knative/eventing",
             eventing, name)
    for kind, minor in (("ingress", serving), ("eventing-source", eventing)):
        minor = ".".join(minor.split(".")[:2])
        for comp in sorted((kodata / kind / minor).iterdir()):
            files = sorted(comp.glob("*.yaml"))
            version = _release_version(files, minor)
            for f in files:
                link(f, f"knative-extensions/{COMPANION_REPOS[comp.name]}", version, f.name)
    return dest

"""Bad input, clearly refused: each malformed fleet config, provider file or
ClusterProfile yields one clear error naming the problem, with no traceback
and before anything touches a cluster (these are pure validation steps)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from access import ProfileError, ProviderFile, ProviderFileError, Reason, load_provider_file
from access.connection import build_connection, check_ready
from config.fleet import parse_fleet_config
from core.errors import FleetConfigError

REF = {"name": "p", "namespace": "fleet-system"}
GOOD_ENTRY = {"name": "spoke-1", "clusterProfileRef": REF, "serving": {"version": "1.23"}}


def fleet(*entries: dict, **top: object) -> dict:
    return {"fleet": list(entries), **top}


def with_entry(**changes: object) -> dict:
    e = copy.deepcopy(GOOD_ENTRY)
    e.update(changes)
    return e


FLEET_CASES = [
    ("name not a DNS label", fleet(with_entry(name="Spoke_1")), "fleet[0].name"),
    ("name missing", fleet({"clusterProfileRef": REF}), "fleet[0].name"),
    ("ref missing", fleet({"name": "a"}), "fleet[0].clusterProfileRef"),
    ("ref without namespace", fleet(with_entry(clusterProfileRef={"name": "p"})),
     "clusterProfileRef.namespace"),
    ("ref with empty name", fleet(with_entry(clusterProfileRef={"name": "", "namespace": "x"})),
     "clusterProfileRef.name"),
    ("duplicate names", fleet(GOOD_ENTRY, with_entry(clusterProfileRef={"name": "q",
                                                                        "namespace": "x"})),
     "already used"),
    ("two entries on one ClusterProfile", fleet(GOOD_ENTRY, with_entry(name="spoke-2")),
     "one entry per ClusterProfile"),
    ("bad version", fleet(with_entry(serving={"version": "latest"})), "serving.version"),
    ("version as number", fleet(with_entry(serving={"version": 1.23})), "serving.version"),
    ("two ingresses", fleet(with_entry(serving={"ingress": {"kourier": {}, "istio": {}}})),
     "exactly one ingress"),
    ("unknown ingress", fleet(with_entry(serving={"ingress": {"nginx": {}}})), "nginx"),
    ("unknown entry key", fleet(with_entry(servng={})), "servng"),
    ("unknown top-level key", fleet(GOOD_ENTRY, fleeet=[]), "fleeet"),
    ("namespace labels not a map", fleet(with_entry(
        serving={"namespaceConfiguration": {"labels": ["a"]}})), "namespaceConfiguration"),
    ("release base not a URL", fleet(GOOD_ENTRY, releaseBase="ftp://x"), "releaseBase"),
    ("plugin timeout negative", fleet(GOOD_ENTRY, pluginTimeoutSeconds=-1),
     "pluginTimeoutSeconds"),
    ("fleet not a list", {"fleet": {"spoke-1": GOOD_ENTRY}}, "knative-fleet:fleet"),
    ("kourier service type unknown", fleet(with_entry(
        serving={"ingress": {"kourier": {"service-type": "Magic"}}})), "service-type"),
    ("PDB with both budgets", fleet(with_entry(serving={"podDisruptionBudgets": [
        {"name": "activator-pdb", "minAvailable": 1, "maxUnavailable": 1}]})),
     "podDisruptionBudgets[0]"),
    ("registry default without ${NAME}", fleet(with_entry(
        serving={"registry": {"default": "example.com/knative:v1"}})), "registry.default"),
    ("negative HA replicas", fleet(with_entry(
        serving={"high-availability": {"replicas": -1}})), "high-availability.replicas"),
    ("workload without a name", fleet(with_entry(serving={"workloads": [{"replicas": 1}]})),
     "workloads[0].name"),
    ("unknown sink binding mode", fleet(with_entry(
        eventing={"sinkBindingSelectionMode": "some"})), "sinkBindingSelectionMode"),
    ("unknown eventing source", fleet(with_entry(eventing={"source": {"nats": {}}})), "nats"),
    ("custom certs of an unknown type", fleet(with_entry(
        serving={"controller-custom-certs": {"type": "Volume", "name": "x"}})),
     "controller-custom-certs.type"),
    ("empty manifests list", fleet(with_entry(serving={"manifests": []})), "serving.manifests"),
    ("serving-only key on eventing", fleet(with_entry(eventing={"ingress": {}})), "ingress"),
    ("spoke identity of an unknown kind", fleet(GOOD_ENTRY, spokeIdentity="Robot:x"),
     "knative-fleet:spokeIdentity: 'Robot:x': give ServiceAccount:NAMESPACE/NAME"),
    ("an entry's service account without a namespace", fleet(with_entry(
        spokeIdentity="ServiceAccount:fleet")),
     "fleet[0].spokeIdentity: 'ServiceAccount:fleet': a ServiceAccount is"),
]


@pytest.mark.parametrize("raw,needle", [c[1:] for c in FLEET_CASES],
                         ids=[c[0] for c in FLEET_CASES])
def test_fleet_config_refused(raw: dict, needle: str) -> None:
    with pytest.raises(FleetConfigError) as err:
        parse_fleet_config(raw)
    text = str(err.value)
    assert needle in text
    assert "Traceback" not in text
    assert "knative-fleet:" in text


PROVIDER = {"name": "secretreader", "execConfig": {
    "apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/plugin",
    "provideClusterInfo": True}}

PROVIDER_FILE_CASES = [
    ("not JSON", "{providers: ", "JSON"),
    ("providers missing", json.dumps({}), "providers"),
    ("duplicate provider names", json.dumps({"providers": [PROVIDER, PROVIDER]}), "duplicate"),
    ("unknown args policy", json.dumps({"providers": [
        {**PROVIDER, "profileSourcedCLIArgsPolicy": "Prepend"}]}), "profileSourcedCLIArgsPolicy"),
    ("unknown env policy", json.dumps({"providers": [
        {**PROVIDER, "profileSourcedEnvVarsPolicy": "Merge"}]}), "profileSourcedEnvVarsPolicy"),
    ("bad exec apiVersion", json.dumps({"providers": [
        {**PROVIDER, "execConfig": {**PROVIDER["execConfig"], "apiVersion": "v1"}}]}),
     "apiVersion"),
    ("exec key typo", json.dumps({"providers": [
        {**PROVIDER, "execConfig": {**PROVIDER["execConfig"], "provideClusterinfo": True}}]}),
     "provideClusterinfo"),
    ("args not a list", json.dumps({"providers": [
        {**PROVIDER, "execConfig": {**PROVIDER["execConfig"], "args": "--x"}}]}), "args"),
]


@pytest.mark.parametrize("text,needle", [c[1:] for c in PROVIDER_FILE_CASES],
                         ids=[c[0] for c in PROVIDER_FILE_CASES])
def test_provider_file_refused(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "providers.json"
    path.write_text(text)
    with pytest.raises(ProviderFileError) as err:
        load_provider_file(str(path))
    assert needle in str(err.value)
    assert str(path) in str(err.value)


def test_provider_file_missing(tmp_path: Path) -> None:
    with pytest.raises(ProviderFileError) as err:
        load_provider_file(str(tmp_path / "nope.json"))
    assert "nope.json" in str(err.value)


def profile(status: object) -> dict:
    return {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
            "metadata": {"name": "p", "namespace": "fleet-system"},
            "spec": {"clusterManager": {"name": "m"}}, "status": status}


HEALTHY = [{"type": "ControlPlaneHealthy", "status": "True", "reason": "r", "message": "m",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def cluster(**fields: object) -> dict:
    base = {"server": "https://127.0.0.1:6443"}
    base.update(fields)
    return {"name": "secretreader", "cluster": base}


NOT_READY_CASES = [
    ("no status", profile(None)),
    ("null conditions", profile({"conditions": None})),
    ("condition missing", profile({"conditions": []})),
    ("condition False", profile({"conditions": [{**HEALTHY[0], "status": "False"}]})),
]


@pytest.mark.parametrize("doc", [c[1] for c in NOT_READY_CASES],
                         ids=[c[0] for c in NOT_READY_CASES])
def test_profile_not_ready(doc: dict) -> None:
    with pytest.raises(ProfileError) as err:
        check_ready(doc)
    assert err.value.reason == Reason.CLUSTER_PROFILE_NOT_READY


PROVIDERS = ProviderFile.model_validate({"providers": [
    {**PROVIDER, "profileSourcedCLIArgsPolicy": "Append",
     "profileSourcedEnvVarsPolicy": "Replace"}]})

ACCESS_CASES = [
    ("no accessProviders", {"conditions": HEALTHY}, "advertises no"),
    ("no provider name matches", {"conditions": HEALTHY, "accessProviders": [
        {"name": "other", "cluster": {"server": "https://x"}}]}, "other"),
    ("missing cluster.server", {"conditions": HEALTHY, "accessProviders": [
        {"name": "secretreader", "cluster": {}}]}, "server"),
    ("bad base64 CA", {"conditions": HEALTHY, "accessProviders": [
        cluster(**{"certificate-authority-data": "!!not base64!!"})]}, "certificate-authority"),
    ("exec extension wrong type", {"conditions": HEALTHY, "accessProviders": [cluster(
        extensions=[{"name": "client.authentication.k8s.io/exec", "extension": "x"}])]},
     "must be an object"),
    ("additional-args not a list", {"conditions": HEALTHY, "accessProviders": [cluster(
        extensions=[{"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-args",
                     "extension": {"a": "b"}}])]}, "additional-args"),
    ("additional-envs not a map", {"conditions": HEALTHY, "accessProviders": [cluster(
        extensions=[{"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs",
                     "extension": ["A=B"]}])]}, "additional-envs"),
    ("server not a URL", {"conditions": HEALTHY, "accessProviders": [
        cluster(server="127.0.0.1:6443")]}, "server"),
]


@pytest.mark.parametrize("status,needle", [c[1:] for c in ACCESS_CASES],
                         ids=[c[0] for c in ACCESS_CASES])
def test_access_provider_refused(status: dict, needle: str) -> None:
    with pytest.raises(ProfileError) as err:
        build_connection(profile(status), PROVIDERS)
    assert err.value.reason == Reason.ACCESS_PROVIDER_FAILED
    assert needle in err.value.message


def test_table_has_at_least_thirty_cases() -> None:
    total = len(FLEET_CASES) + len(PROVIDER_FILE_CASES) + 1 + len(NOT_READY_CASES) + len(
        ACCESS_CASES)
    assert total >= 30

"""build_connection/check_ready/to_kubeconfig against ClusterProfiles shaped like the CRD."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
import yaml

from access import ProfileError, ProviderFile, Reason, build_connection, check_ready, to_kubeconfig
from lab.paths import CLUSTERPROFILE_CRD

CRD = CLUSTERPROFILE_CRD.parent
CRD_FILE = CRD / "multicluster.x-k8s.io_clusterprofiles.yaml"
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
ARGS_EXT = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
ENVS_EXT = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
EXEC_EXT = "client.authentication.k8s.io/exec"
V1 = "client.authentication.k8s.io/v1"


def profile(
    access: list[dict] | None = None,
    credential: list[dict] | None = None,
    conditions: Any = "healthy",
) -> dict:
    if conditions == "healthy":
        conditions = [condition("True")]
    status: dict[str, Any] = {"conditions": conditions}
    if access is not None:
        status["accessProviders"] = access
    if credential is not None:
        status["credentialProviders"] = credential
    return {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": "spoke-1", "namespace": "fleet-system"},
        "spec": {"displayName": "Spoke 1", "clusterManager": {"name": "knative-fleet"}},
        "status": status,
    }


def condition(status: str, reason: str = "Manual", message: str = "set by hand") -> dict:
    return {
        "type": "ControlPlaneHealthy",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-04-22T00:00:00Z",
    }


def entry(name: str = "secretreader", server: str = "https://10.0.0.1:6443", **cluster) -> dict:
    extensions = cluster.pop("extensions", None)
    body = {"server": server, "certificate-authority-data": CA, **cluster}
    if extensions is not None:
        body["extensions"] = [{"name": k, "extension": v} for k, v in extensions]
    return {"name": name, "cluster": body}


def providers(*items: dict) -> ProviderFile:
    return ProviderFile.model_validate({"providers": list(items)})


def provider(name: str = "secretreader", **overrides) -> dict:
    exec_config = {
        "apiVersion": V1,
        "command": "/usr/local/bin/secretreader",
        "args": ["--v=1"],
        "env": [{"name": "B", "value": "file-b"}, {"name": "A", "value": "file-a"}],
        "provideClusterInfo": True,
    }
    body = {"name": name, "execConfig": exec_config}
    body.update(overrides)
    return body


# --- shape: fixtures must be what a real API server would store -------------------------


def _schema() -> dict:
    crd = yaml.safe_load(CRD_FILE.read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _violations(value: Any, schema: dict, path: str = "") -> list[str]:
    kind = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int}
    if kind and not isinstance(value, types[kind]):
        return [f"{path}: want {kind}"]
    found = []
    if kind == "object" and "properties" in schema:
        found += [
            f"{path}.{key}: required" for key in schema.get("required", []) if key not in value
        ]
        for key, item in value.items():
            if key in schema["properties"]:
                found += _violations(item, schema["properties"][key], f"{path}.{key}")
            elif not schema.get("x-kubernetes-preserve-unknown-fields") and path != ".metadata":
                found.append(f"{path}.{key}: unknown field")
    if kind == "array":
        for index, item in enumerate(value):
            found += _violations(item, schema["items"], f"{path}[{index}]")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{path}: not in enum")
    return found


def test_fixtures_match_the_real_crd() -> None:
    schema = _schema()
    full = profile(
        [
            entry(
                extensions=[(EXEC_EXT, {"clusterName": "spoke-1"}), (ENVS_EXT, {"X": "1"})],
                **{"tls-server-name": "spoke", "proxy-url": "http://proxy:3128"},
            )
        ],
        [entry("old")],
    )
    assert _violations(full, schema) == []
    assert _violations(profile([entry()], conditions=[condition("False")]), schema) == []


def test_crd_types_extension_as_object_so_list_args_cannot_be_stored() -> None:
    """Upstream's additional-args is a list, but the CRD says `extension: object`."""
    listed = profile([entry(extensions=[(ARGS_EXT, ["--a"])])])
    assert _violations(listed, _schema()) == [
        ".status.accessProviders[0].cluster.extensions[0].extension: want object"
    ]


# --- readiness -----------------------------------------------------------------------------


def test_healthy_profile_is_ready() -> None:
    check_ready(profile([entry()]))


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        (None, "no ControlPlaneHealthy condition (no status.conditions)"),
        ([], "no ControlPlaneHealthy condition (no status.conditions)"),
        (
            [{**condition("True"), "type": "Joined"}],
            "no ControlPlaneHealthy condition (conditions Joined)",
        ),
        (
            [condition("False", "Unreachable", "lease expired")],
            "has ControlPlaneHealthy=False (reason 'Unreachable', message 'lease expired')",
        ),
        ([condition("Unknown")], "has ControlPlaneHealthy=Unknown"),
    ],
)
def test_not_ready(conditions: Any, expected: str) -> None:
    with pytest.raises(ProfileError) as caught:
        check_ready(profile([entry()], conditions=conditions))
    assert caught.value.reason is Reason.CLUSTER_PROFILE_NOT_READY
    assert "ClusterProfile fleet-system/spoke-1" in caught.value.message
    assert expected in caught.value.message


def test_profile_without_status_is_not_ready() -> None:
    bare = profile()
    del bare["status"]
    with pytest.raises(ProfileError, match="no status yet"):
        check_ready(bare)


# --- provider choice -------------------------------------------------------------------------


def test_healthy_profile_builds_connection() -> None:
    conn = build_connection(profile([entry()]), providers(provider()))
    assert conn.server == "https://10.0.0.1:6443"
    assert conn.certificate_authority_data == CA
    assert conn.provider_name == "secretreader"
    assert conn.exec_api_version == V1
    assert conn.command == "/usr/local/bin/secretreader"
    assert conn.args == ("--v=1",)
    assert conn.env == (("B", "file-b"), ("A", "file-a"))
    assert conn.provide_cluster_info is True
    assert conn.exec_extension is None
    assert conn.proxy_url is None and conn.tls_server_name is None
    assert conn.insecure_skip_tls_verify is False


def test_access_providers_win_over_credential_providers_on_a_clash() -> None:
    cp = profile(
        access=[entry("secretreader", "https://new:6443")],
        credential=[entry("secretreader", "https://old:6443"), entry("legacy", "https://l:1")],
    )
    conn = build_connection(cp, providers(provider()))
    assert conn.server == "https://new:6443"


def test_credential_providers_are_merged_in() -> None:
    cp = profile(access=[entry("a", "https://a:1")], credential=[entry("legacy", "https://l:1")])
    conn = build_connection(cp, providers(provider("legacy"), provider("a")))
    assert (conn.provider_name, conn.server) == ("legacy", "https://l:1")


def test_provider_file_order_decides_not_profile_order() -> None:
    cp = profile([entry("first", "https://first:1"), entry("second", "https://second:1")])
    conn = build_connection(cp, providers(provider("other"), provider("second"), provider("first")))
    assert conn.provider_name == "second"


def _fails(cp: dict, pf: ProviderFile, *fragments: str) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        build_connection(cp, pf)
    assert caught.value.reason is Reason.ACCESS_PROVIDER_FAILED
    for fragment in fragments:
        assert fragment in caught.value.message
    return caught.value


def test_no_match_names_both_sides() -> None:
    _fails(
        profile([entry("oidc"), entry("kubeconfig")]),
        providers(provider("secretreader")),
        "(kubeconfig, oidc)",
        "which has: secretreader",
    )


def test_profile_without_any_provider() -> None:
    _fails(
        profile(),
        providers(provider("secretreader"), provider("x")),
        "advertises no access providers",
        "the provider file has: secretreader, x",
    )


def test_provider_without_exec_config() -> None:
    _fails(profile([entry()]), providers({"name": "secretreader"}), "has no execConfig")


def test_missing_cluster_or_server() -> None:
    _fails(profile([{"name": "secretreader"}]), providers(provider()), "cluster is missing")
    _fails(profile([entry(server="")]), providers(provider()), "cluster.server is missing")
    _fails(profile([entry(server="10.0.0.1:6443")]), providers(provider()), "is not a")


def test_bad_base64_ca() -> None:
    _fails(
        profile([entry(**{"certificate-authority-data": "not base64!"})]),
        providers(provider()),
        "certificate-authority-data is not valid base64",
    )


def test_ca_with_line_breaks_is_normalised() -> None:
    wrapped = "\n".join(CA[i : i + 20] for i in range(0, len(CA), 20))
    conn = build_connection(
        profile([entry(**{"certificate-authority-data": wrapped})]), providers(provider())
    )
    assert conn.certificate_authority_data == CA


def test_exec_extension_must_be_an_object() -> None:
    _fails(
        profile([entry(extensions=[(EXEC_EXT, "arbitrary-data")])]),
        providers(provider()),
        f"{EXEC_EXT} must be an object",
    )


def test_exec_extension_is_passed_through_as_a_copy() -> None:
    cp = profile([entry(extensions=[(EXEC_EXT, {"clusterName": "spoke-1"})])])
    conn = build_connection(cp, providers(provider()))
    assert conn.exec_extension == {"clusterName": "spoke-1"}
    cp["status"]["accessProviders"][0]["cluster"]["extensions"][0]["extension"]["x"] = 1
    assert conn.exec_extension == {"clusterName": "spoke-1"}


# --- profile-sourced args and envs -----------------------------------------------------------


def test_additional_args_appended() -> None:
    cp = profile([entry(extensions=[(ARGS_EXT, ["--audience", "spoke"])])])
    conn = build_connection(cp, providers(provider(profileSourcedCLIArgsPolicy="Append")))
    assert conn.args == ("--v=1", "--audience", "spoke")


@pytest.mark.parametrize("policy", ["", "Ignore"])
def test_additional_args_ignored(policy: str) -> None:
    cp = profile([entry(extensions=[(ARGS_EXT, {"not": "even a list"})])])
    conn = build_connection(cp, providers(provider(profileSourcedCLIArgsPolicy=policy)))
    assert conn.args == ("--v=1",)


@pytest.mark.parametrize("bad", [{"a": "b"}, "--a", ["--a", 1]])
def test_additional_args_must_be_list_of_strings(bad: Any) -> None:
    _fails(
        profile([entry(extensions=[(ARGS_EXT, bad)])]),
        providers(provider(profileSourcedCLIArgsPolicy="Append")),
        f"{ARGS_EXT} must be a list of strings",
    )


ENVS = {"Z": "profile-z", "A": "profile-a", "C": "profile-c"}


def test_additional_envs_append_if_not_exists_keeps_file_values() -> None:
    cp = profile([entry(extensions=[(ENVS_EXT, ENVS)])])
    pf = providers(provider(profileSourcedEnvVarsPolicy="AppendIfNotExists"))
    conn = build_connection(cp, pf)
    assert conn.env == (("B", "file-b"), ("A", "file-a"), ("C", "profile-c"), ("Z", "profile-z"))


def test_additional_envs_replace_prefers_profile_values() -> None:
    cp = profile([entry(extensions=[(ENVS_EXT, ENVS)])])
    conn = build_connection(cp, providers(provider(profileSourcedEnvVarsPolicy="Replace")))
    assert conn.env == (
        ("B", "file-b"),
        ("A", "profile-a"),
        ("C", "profile-c"),
        ("Z", "profile-z"),
    )


@pytest.mark.parametrize("policy", ["", "Ignore"])
def test_additional_envs_ignored(policy: str) -> None:
    cp = profile([entry(extensions=[(ENVS_EXT, ENVS)])])
    conn = build_connection(cp, providers(provider(profileSourcedEnvVarsPolicy=policy)))
    assert conn.env == (("B", "file-b"), ("A", "file-a"))


@pytest.mark.parametrize("bad", [["A=1"], {"A": 1}, "A=1"])
def test_additional_envs_must_be_string_map(bad: Any) -> None:
    _fails(
        profile([entry(extensions=[(ENVS_EXT, bad)])]),
        providers(provider(profileSourcedEnvVarsPolicy="Replace")),
        f"{ENVS_EXT} must be a map of string to string",
    )


def test_no_accumulation_across_calls() -> None:
    pf = providers(
        provider(profileSourcedCLIArgsPolicy="Append", profileSourcedEnvVarsPolicy="Replace")
    )
    before = pf.model_dump()
    one = profile([entry(extensions=[(ARGS_EXT, ["--one"]), (ENVS_EXT, {"A": "one"})])])
    two = profile([entry(extensions=[(ARGS_EXT, ["--two"]), (ENVS_EXT, {"N": "two"})])])
    first, second = build_connection(one, pf), build_connection(two, pf)
    again = build_connection(copy.deepcopy(one), pf)
    assert first.args == ("--v=1", "--one") == again.args
    assert second.args == ("--v=1", "--two")
    assert second.env == (("B", "file-b"), ("A", "file-a"), ("N", "two"))
    assert first == again
    assert pf.model_dump() == before


# --- TLS options and kubeconfig --------------------------------------------------------------


def test_tls_server_name_and_proxy_pass_through_to_kubeconfig() -> None:
    cp = profile([entry(**{"tls-server-name": "spoke.internal", "proxy-url": "socks5://p:1080"})])
    conn = build_connection(cp, providers(provider()))
    cluster = to_kubeconfig(conn, "spoke-1")["clusters"][0]["cluster"]
    assert cluster == {
        "server": "https://10.0.0.1:6443",
        "certificate-authority-data": CA,
        "proxy-url": "socks5://p:1080",
        "tls-server-name": "spoke.internal",
    }


def test_insecure_skip_tls_verify_passes_through() -> None:
    cp = profile([entry(**{"insecure-skip-tls-verify": True, "certificate-authority-data": ""})])
    conn = build_connection(cp, providers(provider()))
    assert conn.insecure_skip_tls_verify is True
    cluster = to_kubeconfig(conn, "s")["clusters"][0]["cluster"]
    assert cluster == {"server": "https://10.0.0.1:6443", "insecure-skip-tls-verify": True}


def test_insecure_together_with_ca_is_refused() -> None:
    _fails(
        profile([entry(**{"insecure-skip-tls-verify": True})]),
        providers(provider()),
        "both insecure-skip-tls-verify and certificate-authority-data",
    )


def test_kubeconfig_shape() -> None:
    cp = profile([entry(extensions=[(EXEC_EXT, {"clusterName": "spoke-1"})])])
    pf = providers(provider(execConfig={**provider()["execConfig"], "interactiveMode": "Always"}))
    conn = build_connection(cp, pf)
    kubeconfig = to_kubeconfig(conn, "spoke-1")
    assert kubeconfig["apiVersion"] == "v1" and kubeconfig["kind"] == "Config"
    assert kubeconfig["current-context"] == "spoke-1"
    assert kubeconfig["contexts"] == [
        {"name": "spoke-1", "context": {"cluster": "spoke-1", "user": "spoke-1"}}
    ]
    cluster = kubeconfig["clusters"][0]
    assert cluster["name"] == "spoke-1"
    assert cluster["cluster"]["extensions"] == [
        {"name": EXEC_EXT, "extension": {"clusterName": "spoke-1"}}
    ]
    user = kubeconfig["users"][0]
    assert user["name"] == "spoke-1"
    assert user["user"] == {
        "exec": {
            "apiVersion": V1,
            "command": "/usr/local/bin/secretreader",
            "args": ["--v=1"],
            "env": [
                {"name": "B", "value": "file-b"},
                {"name": "A", "value": "file-a"},
            ],
            "provideClusterInfo": True,
            "interactiveMode": "Never",
        }
    }
    text = json.dumps(kubeconfig)
    assert "token" not in text.lower()
    assert yaml.safe_load(yaml.safe_dump(kubeconfig)) == kubeconfig

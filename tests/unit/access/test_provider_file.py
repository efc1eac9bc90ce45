"""The provider file loader: the upstream JSON format, with typos caught up front."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from access import ProviderFileError, load_provider_file

V1 = "client.authentication.k8s.io/v1"
OPERATOR_DOC_EXAMPLE = {
    "providers": [
        {
            "name": "secretreader",
            "execConfig": {
                "apiVersion": V1,
                "command": "/credential-plugin/plugin-binary",
                "provideClusterInfo": True,
            },
        }
    ]
}


def write(tmp_path: Path, data: object) -> str:
    path = tmp_path / "providers.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def error(tmp_path: Path, data: object) -> str:
    path = write(tmp_path, data)
    with pytest.raises(ProviderFileError) as caught:
        load_provider_file(path)
    message = str(caught.value)
    assert path in message and "\n" not in message
    return message


def test_operator_doc_example_loads(tmp_path: Path) -> None:
    pf = load_provider_file(write(tmp_path, OPERATOR_DOC_EXAMPLE))
    only = pf.providers[0]
    assert only.name == "secretreader"
    assert only.execConfig is not None
    assert only.execConfig.provideClusterInfo is True
    assert only.execConfig.args == [] and only.execConfig.env == []
    assert only.profileSourcedCLIArgsPolicy == "" and only.profileSourcedEnvVarsPolicy == ""


def test_full_provider_loads(tmp_path: Path) -> None:
    data = {
        "providers": [
            {
                "name": "a",
                "execConfig": {
                    "apiVersion": "client.authentication.k8s.io/v1beta1",
                    "command": "plugin",
                    "args": ["--x"],
                    "env": [{"name": "K", "value": "v"}],
                    "interactiveMode": "IfAvailable",
                    "installHint": "go install example.com/plugin@latest",
                },
                "profileSourcedCLIArgsPolicy": "Append",
                "profileSourcedEnvVarsPolicy": "AppendIfNotExists",
            },
            {"name": "b", "execConfig": None, "profileSourcedEnvVarsPolicy": "Replace"},
        ]
    }
    pf = load_provider_file(write(tmp_path, data))
    assert pf.names() == ["a", "b"]
    assert pf.providers[0].execConfig.env[0].value == "v"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProviderFileError, match="does not exist.*knative-fleet:providerFile"):
        load_provider_file(str(tmp_path / "nope.json"))


def test_bad_json(tmp_path: Path) -> None:
    message = error(tmp_path, '{"providers": [\n  {"name": "a",}\n]}')
    assert "is not valid JSON" in message and "line 2" in message


def test_duplicate_names(tmp_path: Path) -> None:
    message = error(tmp_path, {"providers": [{"name": "a"}, {"name": "b"}, {"name": "a"}]})
    assert "providers: duplicate provider name 'a' (providers[0] and providers[2])" in message


def test_unknown_policy(tmp_path: Path) -> None:
    data = {"providers": [{"name": "a", "profileSourcedEnvVarsPolicy": "Merge"}]}
    message = error(tmp_path, data)
    assert "providers[0].profileSourcedEnvVarsPolicy" in message and "(got 'Merge')" in message


def test_every_problem_is_listed_with_its_path(tmp_path: Path) -> None:
    data = {
        "providers": [
            {
                "name": "a",
                "execConfig": {"apiVersion": V1, "command": "x", "provideClusterinfo": True},
            },
            {"name": "b", "execConfig": {"command": "", "args": "--x"}},
        ],
        "extra": 1,
    }
    message = error(tmp_path, data)
    for fragment in (
        "providers[0].execConfig.provideClusterinfo: unknown key (typo?)",
        "providers[1].execConfig.apiVersion: Field required",
        "providers[1].execConfig.command: String should have at least 1 character",
        "providers[1].execConfig.args: Input should be a valid list",
        "extra: unknown key (typo?)",
    ):
        assert fragment in message


@pytest.mark.parametrize(
    ("exec_config", "fragment"),
    [
        ({"apiVersion": "v1", "command": "x"}, "execConfig.apiVersion: must be one of"),
        ({"apiVersion": V1, "command": "x", "interactiveMode": "never"}, "interactiveMode"),
        ({"apiVersion": V1, "command": "x", "provideClusterInfo": "true"}, "valid boolean"),
    ],
)
def test_field_values_are_checked(tmp_path: Path, exec_config: dict, fragment: str) -> None:
    assert fragment in error(tmp_path, {"providers": [{"name": "a", "execConfig": exec_config}]})


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    assert "(top level)" in error(tmp_path, [])


def test_null_args_and_env_read_as_empty_like_go(tmp_path: Path) -> None:
    data = {
        "providers": [
            {
                "name": "a",
                "execConfig": {"apiVersion": V1, "command": "x", "args": None, "env": None},
            }
        ]
    }
    assert load_provider_file(write(tmp_path, data)).providers[0].execConfig.args == []

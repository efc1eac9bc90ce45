"""The Secret reads a state an earlier release wrote still needs (operations.state_reads),
and the rights command printing them, with the note that says when to remove them."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml

from knative.secret_reads import READS
from lab.paths import RELEASES
from operations.__main__ import main
from operations.state_reads import unbound_namespaces, until_up_documents

SECRET = "kubernetes:core/v1:Secret"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"


def resource(kind: str, namespace: str, name: str) -> dict:
    return {"type": kind, "inputs": {"metadata": {"namespace": namespace, "name": name}}}


OLD_STATE = [resource(SECRET, "knative-serving", "webhook-certs"),
             resource(SECRET, "knative-eventing", "eventing-webhook-certs"),
             resource(BINDING, "knative-serving", "knative-serving-activator")]
NEW_STATE = [*OLD_STATE, resource(BINDING, "knative-serving", READS),
             resource(BINDING, "knative-eventing", READS)]


def test_a_state_with_secrets_and_no_reads_binding_names_their_namespaces() -> None:
    assert unbound_namespaces(OLD_STATE) == ["knative-eventing", "knative-serving"]
    assert unbound_namespaces(NEW_STATE) == []
    assert unbound_namespaces([]) == []


def test_the_reads_until_up_are_cluster_wide_reads_named_to_be_removed() -> None:
    role, binding = until_up_documents({"kind": "User", "name": "fleet"}, "knative-fleet-a")
    assert role["metadata"]["name"] == binding["metadata"]["name"] == \
        "knative-fleet-a-secret-reads-until-up"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"],
                              "verbs": ["get", "list", "watch"]}]
    assert binding["subjects"] == [{"kind": "User", "name": "fleet"}]


def fake_pulumi(tmp_path: Path, config: dict, resources: list[dict]) -> None:
    """A `pulumi` on PATH answering `config --json` and `stack export` for one stack."""
    (tmp_path / "config.json").write_text(json.dumps(
        {k: {"value": v if isinstance(v, str) else json.dumps(v), "objectValue": v}
         for k, v in config.items()}))
    (tmp_path / "export.json").write_text(json.dumps({"deployment": {"resources": resources}}))
    script = tmp_path / "bin" / "pulumi"
    script.parent.mkdir()
    script.write_text(f"""#!/bin/sh
case "$1" in
  config) cat {tmp_path}/config.json ;;
  stack) cat {tmp_path}/export.json ;;
  *) exit 3 ;;
esac
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize("state,printed", [(OLD_STATE, True), (NEW_STATE, False)],
                         ids=["written-by-an-earlier-release", "after-an-up"])
def test_the_rights_of_a_stack_hold_what_its_state_still_needs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        state: list[dict], printed: bool) -> None:
    fake_pulumi(tmp_path, {"knative-fleet:releaseBase": f"file://{RELEASES}",
                           "knative-fleet:fleet": [{
                               "name": "a", "clusterProfileRef": {"name": "a",
                                                                  "namespace": "inv"},
                               "serving": {"version": "1.23"}}]}, state)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert main(["rights", "--stack", "prod", "--only", "spoke"]) == 0
    out = capsys.readouterr()
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(out.out)]
    until_up = "knative-fleet-spoke-secret-reads-until-up"
    assert (until_up in names) is printed
    if printed:
        assert "the state of prod holds Secrets in knative-eventing, knative-serving" in out.err
        assert f"delete clusterrolebinding,clusterrole {until_up}" in out.err
    else:
        assert out.err == ""

"""`python -m operations rights` on stack files: the spoke's policy, role and bindings
first, then the hub's; several configs give one set that holds all of them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lab.paths import RELEASES
from operations.__main__ import main


def stack_file(path: Path, version: str, namespace: str = "fleet-system",
               identity: str = "User:deployer") -> Path:
    path.write_text(yaml.safe_dump({"config": {
        "knative-fleet:releaseBase": f"file://{RELEASES}",
        "knative-fleet:spokeIdentity": identity,
        "knative-fleet:fleet": [{"name": "a",
                                 "clusterProfileRef": {"name": "a", "namespace": namespace},
                                 "eventing": {"version": version}}]}}))
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    assert main(["rights", *args]) == 0
    return list(yaml.safe_load_all(capsys.readouterr().out))


def test_the_spoke_side_is_the_policy_then_the_role(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    docs = run(capsys, "--config", str(stack_file(tmp_path / "a.yaml", "1.23")),
               "--spoke-subject", "User:deployer", "--spoke-role", "knative-fleet-a")
    assert [d["kind"] for d in docs] == ["ValidatingAdmissionPolicy",
                                         "ValidatingAdmissionPolicyBinding", "ClusterRole",
                                         "ClusterRoleBinding", "Role", "RoleBinding"]
    assert docs[0]["spec"]["matchConditions"][0]["expression"] == \
        'request.userInfo.username == "deployer"'


def test_several_configs_give_one_role_and_policy_that_hold_all(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = stack_file(tmp_path / "old.yaml", "1.22", "inv-1")
    new = stack_file(tmp_path / "new.yaml", "1.23", "inv-2")
    both = run(capsys, "--config", str(old), "--config", str(new))
    one = run(capsys, "--config", str(new))
    release = "".join(v["expression"] for v in both[0]["spec"]["variables"]
                      if v["name"].startswith("release"))
    assert len(release) > len("".join(v["expression"] for v in one[0]["spec"]["variables"]
                                      if v["name"].startswith("release")))
    assert [d["metadata"]["namespace"] for d in both if d["kind"] == "Role"] == \
        ["inv-1", "inv-2"]


def test_without_a_config_it_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["rights"])
    assert "give --stack or --config" in capsys.readouterr().err


def test_two_stacks_sharing_a_namespace_print_rights_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """README: the rights are named after the stack (`--spoke-role`, `--hub-role`), so an
    apply of one stack's rights neither replaces nor takes a field of the other's."""
    printed = {}
    for stack in ("a", "b"):
        config = stack_file(tmp_path / f"{stack}.yaml", "1.23", "shared-inventory")
        printed[stack] = run(capsys, "--config", str(config), "--hub-subject", "User:hub",
                             "--spoke-role", f"knative-fleet-{stack}",
                             "--hub-role", f"knative-fleet-{stack}")

    def names(docs: list[dict]) -> set[tuple[str, str, str]]:
        return {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])
                for d in docs}

    assert names(printed["a"]) & names(printed["b"]) == set()
    hub = [d for d in printed["a"] + printed["b"] if d["kind"] in ("Role", "RoleBinding")
           and d["metadata"]["namespace"] == "shared-inventory"]
    assert len(hub) == 4, hub

"""The shards as Pulumi Kubernetes Operator Stack objects: the ring rule as
prerequisites, the settings' checks, and the example file kept to the generator."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from runner.__main__ import main
from runner.operator_stacks import RING_LABEL, OperatorStackSettings, stack_objects
from runner.selection import SelectionError, StackFile

EXAMPLE = Path(__file__).parents[3] / "runner" / "examples" / "operator-stacks.yaml"
REPO = "https://git.example.com/platform/knative-fleet.git"


def stacks(*rows: tuple[int, str]) -> list[StackFile]:
    return [StackFile(ring, name, Path(f"Pulumi.{name}.yaml")) for ring, name in rows]


def test_each_ring_waits_for_every_stack_of_the_ring_before() -> None:
    objs = stack_objects(stacks((3, "c"), (1, "a1"), (1, "a2"), (2, "b")),
                         OperatorStackSettings(repo=REPO, ring_window="2h"))
    by_name = {o["metadata"]["name"]: o for o in objs}
    assert [o["metadata"]["name"] for o in objs] == ["a1", "a2", "b", "c"]
    assert "prerequisites" not in by_name["a1"]["spec"]
    assert by_name["b"]["spec"]["prerequisites"] == [
        {"name": "a1", "requirement": {"succeededWithinDuration": "2h"}},
        {"name": "a2", "requirement": {"succeededWithinDuration": "2h"}}]
    assert [p["name"] for p in by_name["c"]["spec"]["prerequisites"]] == ["b"]
    assert by_name["c"]["metadata"]["labels"][RING_LABEL] == "3"


def test_a_deleted_stack_object_never_uninstalls_and_drift_is_repaired() -> None:
    spec = stack_objects(stacks((1, "a")), OperatorStackSettings(repo=REPO))[0]["spec"]
    assert spec["destroyOnFinalize"] is False
    assert spec["refresh"] is True and spec["continueResyncOnCommitMatch"] is True
    assert spec["envRefs"]["PULUMI_CONFIG_PASSPHRASE"]["type"] == "Secret"
    assert spec["stack"] == "a"
    org = stack_objects(stacks((1, "a")), OperatorStackSettings(repo=REPO, organization="acme"))
    assert org[0]["spec"]["stack"] == "acme/a"


def test_a_stack_name_that_cannot_name_an_object_is_refused_by_name() -> None:
    with pytest.raises(SelectionError, match="Prod_EU"):
        stack_objects(stacks((1, "ok"), (1, "Prod_EU")), OperatorStackSettings(repo=REPO))


@pytest.mark.parametrize("bad", [
    {"repo": "https://bot:hunter2@git.example.com/x.git"},
    {"repo": REPO, "resync_seconds": 5},
    {"repo": REPO, "ring_window": "a day"},
    {"repo": REPO, "namespace": "Pulumi_Fleet"},
    {"repo": REPO, "resync": 600},
])
def test_bad_settings_are_refused(bad: dict) -> None:
    with pytest.raises(ValidationError):
        OperatorStackSettings.model_validate(bad)


def test_the_password_in_a_repo_url_is_not_repeated_in_the_error() -> None:
    with pytest.raises(ValidationError) as err:
        OperatorStackSettings(repo="https://bot:hunter2@git.example.com/x.git")
    assert "hunter2" not in str(err.value.errors(include_input=False))


def test_the_example_file_is_what_the_generator_prints() -> None:
    docs = list(yaml.safe_load_all(EXAMPLE.read_text()))
    example = [d for d in docs if d["kind"] == "Stack"]
    settings = OperatorStackSettings(repo=REPO, backend="s3://example-fleet-state",
                                     image="registry.example.com/knative-fleet-workspace:1")
    assert example == stack_objects(stacks((1, "prod-eu-canary"), (2, "prod-eu-main")),
                                    settings)
    sa = next(d for d in docs if d["kind"] == "ServiceAccount")["metadata"]
    assert (sa["namespace"], sa["name"]) == (settings.namespace, settings.service_account)


def test_the_command_prints_yaml_and_refuses_bad_flags(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: knative-fleet\n")
    (tmp_path / "Pulumi.eu-1.yaml").write_text("config: {knative-fleet:ring: 1}\n")
    (tmp_path / "Pulumi.eu-2.yaml").write_text("config: {knative-fleet:ring: 2}\n")
    assert main(["operator-stacks", "--project-dir", str(tmp_path), "--repo", REPO]) == 0
    objs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [o["metadata"]["name"] for o in objs] == ["eu-1", "eu-2"]
    assert main(["operator-stacks", "--project-dir", str(tmp_path), "--repo", REPO,
                 "--resync-seconds", "5"]) == 2
    assert "--resync-seconds:" in capsys.readouterr().err
    assert main(["operator-stacks", "--project-dir", str(tmp_path), "--repo", REPO,
                 "--stacks", "us-*"]) == 2
    assert "matches 'us-*'" in capsys.readouterr().err

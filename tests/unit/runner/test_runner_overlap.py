"""No spoke in two stacks: the pure overlap of {stack: claims}, the refusal's text, the
reading of every stack's selection from its file and a (fake) hub, and the CLI refusing
the whole run (exit 2) before any stack runs, whatever the shard or ring."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from core.errors import ProfileError
from core.reasons import Reason
from runner import __main__ as cli
from runner import execution, stack_claims
from runner.overlap import StackSelection, overlaps, refusal
from runner.selection import discover
from targeting.claims import Claim
from targeting.selection import MEMBER_ID_LABEL
from tests.support.factories import profile

HUB = "https://hub.example:6443"


def sel(*claims: Claim, hub: str = HUB) -> StackSelection:
    return StackSelection(hub, tuple(claims))


def test_a_profile_selected_by_two_stacks_names_it_and_both_stacks() -> None:
    selections = {
        "prod-eu-main": sel(Claim("fleet-system/eu-1", "eu-1", "groups[0] ('eu-main')", "m-1"),
                            Claim("fleet-system/eu-3", "eu-3", "groups[0] ('eu-main')")),
        "prod-eu-canary": sel(Claim("fleet-system/eu-1", "eu-1", "groups[0] ('eu-canary')",
                                    "m-1")),
    }
    (found,) = overlaps(selections)
    assert found.stacks == ["prod-eu-canary", "prod-eu-main"]
    text = found.describe()
    assert text.splitlines()[0] == ("ClusterProfile fleet-system/eu-1 (inventory member id "
                                    "'m-1'): selected by stacks prod-eu-canary and prod-eu-main")
    assert "stack prod-eu-canary selects it as spoke 'eu-1' (groups[0] ('eu-canary'))" in text
    assert "stack prod-eu-main selects it as spoke 'eu-1' (groups[0] ('eu-main'))" in text
    assert "python -m operations hand-over --spoke eu-1 --from-stack prod-eu-main " \
           "--to-stack prod-eu-canary" in text
    assert "eu-3" not in text


def test_two_profiles_of_one_member_id_in_two_stacks_are_one_cluster() -> None:
    selections = {
        "a": sel(Claim("f/eu-1", "eu-1", "groups[0] ('eu')", "m-1")),
        "b": sel(Claim("f/eu-1-alias", "one", "fleet[0]", "m-1")),
    }
    (found,) = overlaps(selections)
    text = found.describe()
    assert text.startswith(f"ClusterProfiles f/eu-1 and f/eu-1-alias, one cluster (the same "
                           f"{MEMBER_ID_LABEL}='m-1'): selected by stacks a and b")
    assert "stack b selects f/eu-1-alias as spoke 'one' (fleet[0])" in text


def test_a_profile_of_unknown_labels_still_meets_itself_by_name() -> None:
    # b's entry names the profile, whose labels b could not read; c holds its twin.
    selections = {
        "a": sel(Claim("f/x", "x", "groups[0] ('g')", "m-1")),
        "b": sel(Claim("f/x", "x", "fleet[0]", None)),
        "c": sel(Claim("f/x-twin", "x-twin", "fleet[3]", "m-1")),
    }
    (found,) = overlaps(selections)
    assert found.stacks == ["a", "b", "c"]
    assert found.profiles == ["f/x", "f/x-twin"]


def test_disjoint_selections_and_one_stack_alone_do_not_overlap() -> None:
    assert overlaps({
        "a": sel(Claim("f/a", "a", "groups[0] ('a')", "m-a")),
        "b": sel(Claim("f/b", "b", "groups[0] ('b')", "m-b"), Claim("f/c", "c", "fleet[0]")),
        "empty": StackSelection(""),
    }) == []
    # Two claims of one cluster in one stack are that stack's own conflict, not an overlap.
    assert overlaps({"a": sel(Claim("f/a", "a", "fleet[0]", "m"),
                              Claim("f/b", "b", "fleet[1]", "m"))}) == []


def test_the_same_profile_name_on_two_hubs_is_two_clusters() -> None:
    assert overlaps({"staging": sel(Claim("f/a", "a", "fleet[0]", "m"), hub="https://s"),
                     "prod": sel(Claim("f/a", "a", "fleet[0]", "m"), hub="https://p")}) == []


def test_the_refusal_lists_every_shared_spoke_and_the_fix() -> None:
    selections = {
        "a": sel(Claim("f/x", "x", "groups[0] ('g')"), Claim("f/y", "y", "groups[0] ('g')")),
        "b": sel(Claim("f/x", "x", "fleet[0]"), Claim("f/y", "y", "fleet[1]")),
    }
    text = refusal(overlaps(selections), selections)
    assert text.startswith("refused: 2 spokes are selected by more than one stack")
    assert "ClusterProfile f/x: selected by stacks a and b" in text
    assert "ClusterProfile f/y: selected by stacks a and b" in text
    assert "Nothing was run. Fix: give each spoke one stack: narrow one stack's group " \
           "selector" in text
    assert "--spoke y --from-stack b --to-stack a" in text
    assert "on hub" not in text  # one hub: not worth naming


# --- the reading layer and the CLI, over a project of stack files and a fake hub ---


class FakeHub:
    """Stands for access.inventory.HubInventory: what a kubeconfig path's hub lists."""

    profiles: dict[str | None, list[dict]] = {}
    lists: list[tuple[str | None, str]] = []

    def __init__(self, kubeconfig: str | None, context: str | None, provider_file: None,
                 plugin_timeout_s: float) -> None:
        self.kubeconfig = kubeconfig
        self.hub = SimpleNamespace(configuration=SimpleNamespace(host=f"https://{kubeconfig}"))

    def cluster_profiles(self, namespace: str) -> list[dict]:
        FakeHub.lists.append((self.kubeconfig, namespace))
        if namespace == "forbidden":
            raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, "hub said 403")
        return [p for p in self.profiles.get(self.kubeconfig, [])
                if p["metadata"]["namespace"] == namespace]


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> type[FakeHub]:
    monkeypatch.setattr(stack_claims, "HubInventory", FakeHub)
    FakeHub.lists = []
    return FakeHub


def group(name: str, **labels: str) -> dict:
    return {"name": name, "namespace": "fleet-system", "selector": {"matchLabels": labels},
            "serving": {"version": "1.23"}}


def entry(name: str, ref: str | None = None) -> dict:
    return {"name": name, "clusterProfileRef": {"name": ref or name,
                                                "namespace": "fleet-system"}}


def project(tmp_path: Path, stacks: dict[str, dict]) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    for name, config in stacks.items():
        config = {"knative-fleet:hub": {"kubeconfig": "hub.kubeconfig"}, **config}
        (tmp_path / "stacks" / f"Pulumi.{name}.yaml").write_text(
            yaml.safe_dump({"config": config, "encryptionsalt": "v1:x"}))
    return tmp_path


PROFILES = [profile("eu-1", "fleet-system", region="eu", ring="canary"),
            profile("eu-2", "fleet-system", region="eu", ring="main"),
            profile("us-1", "fleet-system", region="us", ring="canary")]


def test_every_stack_is_read_with_one_list_per_hub_and_namespace(
        tmp_path: Path, hub: type[FakeHub]) -> None:
    root = project(tmp_path, {
        "eu": {"knative-fleet:groups": [group("eu", region="eu")]},
        "canary": {"knative-fleet:ring": 2,
                   "knative-fleet:groups": [group("canary", ring="canary")]},
        "tiny": {"knative-fleet:ring": 1, "tiny:spokes": ["a"]},  # selects nothing
    })
    hub.profiles = {str(root / "hub.kubeconfig"): PROFILES}
    read = stack_claims.read_selections(root, discover(root))
    assert read.notes == []
    assert hub.lists == [(str(root / "hub.kubeconfig"), "fleet-system")]  # relative: project's
    assert read.selections["tiny"] == StackSelection("")
    assert [c.profile for c in read.selections["canary"].claims] == [
        "fleet-system/eu-1", "fleet-system/us-1"]
    (found,) = overlaps(read.selections)
    assert (found.profiles, found.stacks) == (["fleet-system/eu-1"], ["canary", "eu"])


def test_a_stack_that_cannot_be_read_is_left_out_with_a_note(
        tmp_path: Path, hub: type[FakeHub]) -> None:
    root = project(tmp_path, {
        "bad": {"knative-fleet:fleet": [{"name": "Not_A_Name"}]},
        "secret": {"knative-fleet:hub": {"secure": "v1:abc"}},
        "locked": {"knative-fleet:groups": [{**group("g"), "namespace": "forbidden"}],
                   "knative-fleet:fleet": [entry("eu-1")]},
    })
    read = stack_claims.read_selections(root, discover(root))
    assert sorted(read.selections) == ["locked"]
    notes = "\n".join(read.notes)
    assert "stack bad is left out of the check: its config cannot be read" in notes
    assert "knative-fleet:hub is a secret" in notes
    assert "stack locked: its groups in namespace forbidden are left out" in notes
    # The explicit entry still counts, by its clusterProfileRef.
    assert [c.profile for c in read.selections["locked"].claims] == ["fleet-system/eu-1"]


def test_a_stack_removed_after_its_listing_is_no_stack(
        tmp_path: Path, hub: type[FakeHub]) -> None:
    root = project(tmp_path, {"eu": {"knative-fleet:groups": [group("eu", region="eu")]},
                              "gone": {"knative-fleet:groups": [group("gone")]}})
    hub.profiles = {str(root / "hub.kubeconfig"): PROFILES}
    listed = discover(root)
    (root / "stacks" / "Pulumi.gone.yaml").unlink()
    read = stack_claims.read_selections(root, listed)
    assert sorted(read.selections) == ["eu"] and read.notes == []


def run_cli(root: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> int:
    def never(*_a, **_k):
        raise AssertionError("a stack ran although the run was refused")

    monkeypatch.setattr(execution, "run_ring", never)
    return cli.main([*args, "--project-dir", str(root), "--log-dir", str(root / "logs")])


@pytest.mark.parametrize("args", [
    ("up", "--stacks", "*"),
    ("destroy", "--stacks", "prod-*"),
    ("preview", "--stacks", "prod-*", "--ring", "2"),
    ("refresh", "--stacks", "prod-*", "--shard", "2/2"),  # this shard: prod-b only
])
def test_the_runner_refuses_overlapping_stacks_before_any_runs(
        tmp_path: Path, hub: type[FakeHub], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    root = project(tmp_path, {
        "prod-a": {"knative-fleet:groups": [group("eu", region="eu")]},
        "prod-b": {"knative-fleet:fleet": [entry("eu-2")]},
        "prod-c": {"knative-fleet:ring": 2, "knative-fleet:fleet": [entry("us-1")]},
    })
    hub.profiles = {str(root / "hub.kubeconfig"): PROFILES}
    assert run_cli(root, *args, monkeypatch=monkeypatch) == 2
    err = capsys.readouterr().err
    assert "python -m runner: refused: 1 spoke is selected by more than one stack" in err
    assert "ClusterProfile fleet-system/eu-2: selected by stacks prod-a and prod-b" in err
    assert "stack prod-b selects it as spoke 'eu-2' (fleet[0])" in err
    assert ("python -m operations hand-over --spoke eu-2 --from-stack prod-b "
            "--to-stack prod-a") in err
    assert not (root / "logs").exists()


def test_disjoint_stacks_pass_the_check(tmp_path: Path, hub: type[FakeHub]) -> None:
    root = project(tmp_path, {
        "prod-a": {"knative-fleet:groups": [group("eu", region="eu")]},
        "prod-b": {"knative-fleet:fleet": [entry("us-1")]},
    })
    hub.profiles = {str(root / "hub.kubeconfig"): PROFILES}
    lines: list[str] = []
    cli.refuse_overlaps(root, "prod-*", lines.append)
    assert lines == []
    assert hub.lists == [(str(root / "hub.kubeconfig"), "fleet-system")]

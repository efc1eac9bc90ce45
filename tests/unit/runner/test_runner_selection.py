"""Which stacks a run takes: stack files by name pattern, their ring read from the file
as the program reads it, and `--shard i/n` as a deterministic slice of every ring."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.selection import (
    SelectionError,
    Shard,
    StackFile,
    discover,
    matching,
    read_ring,
    select,
    shard_of,
    stack_config_dir,
)


def project(tmp_path: Path, rings: dict[str, object], config_dir: str | None = "stacks") -> Path:
    """A project whose stack files carry the given `knative-fleet:ring` values (a value
    of None: the key is absent)."""
    settings = "name: p\nruntime: python\n"
    if config_dir:
        settings += f"stackConfigDir: {config_dir}\n"
    (tmp_path / "Pulumi.yaml").write_text(settings)
    where = tmp_path / config_dir if config_dir else tmp_path
    where.mkdir(exist_ok=True)
    for name, ring in rings.items():
        body = "config:\n  knative-fleet:fleet: []\n"
        if ring is not None:
            body += f"  knative-fleet:ring: {ring}\n"
        (where / f"Pulumi.{name}.yaml").write_text(body + "encryptionsalt: v1:x\n")
    return tmp_path


def names(stacks: list[StackFile]) -> list[str]:
    return [s.name for s in stacks]


def test_stacks_come_from_the_stack_config_dir_with_their_rings(tmp_path: Path) -> None:
    root = project(tmp_path, {"eu-1": 1, "eu-2": 2, "us-1": None, "canary": "'1'"})
    (root / "stacks" / "notes.yaml").write_text("not a stack")
    found = discover(root)
    assert [(s.ring, s.name) for s in found] == [
        (1, "canary"), (1, "eu-1"), (1, "us-1"), (2, "eu-2")]
    assert found[0].path == root / "stacks" / "Pulumi.canary.yaml"


def test_a_stack_file_gone_since_the_listing_is_no_stack(tmp_path: Path) -> None:
    """A file listed and then removed (another run's, or the user's edit) is left out,
    not a crash: a dangling link is listed by the glob and cannot be read."""
    root = project(tmp_path, {"a": 1})
    (root / "stacks" / "Pulumi.gone.yaml").symlink_to(root / "stacks" / "removed.yaml")
    assert names(discover(root)) == ["a"]


def test_without_stack_config_dir_the_files_are_beside_pulumi_yaml(tmp_path: Path) -> None:
    root = project(tmp_path, {"a": 3}, config_dir=None)
    assert stack_config_dir(root) == root
    assert [(s.ring, s.name) for s in discover(root)] == [(3, "a")]


def test_a_directory_without_pulumi_yaml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SelectionError, match="--project-dir"):
        discover(tmp_path)


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "true", "canary", "[1]", "'two'"])
def test_a_bad_ring_names_its_file(tmp_path: Path, value: str) -> None:
    root = project(tmp_path, {"ok": 1, "bad": value})
    with pytest.raises(SelectionError) as err:
        discover(root)
    assert "Pulumi.bad.yaml" in str(err.value)
    assert "knative-fleet:ring" in str(err.value)


def test_every_bad_ring_is_reported_at_once(tmp_path: Path) -> None:
    root = project(tmp_path, {"a": 0, "b": "x"})
    with pytest.raises(SelectionError) as err:
        discover(root)
    assert "Pulumi.a.yaml" in str(err.value) and "Pulumi.b.yaml" in str(err.value)


def test_ring_as_text_is_read_as_the_program_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text('config:\n  knative-fleet:ring: "2"\n')
    assert read_ring(path) == 2
    path.write_text("config: {}\n")
    assert read_ring(path) == 1
    path.write_text("")
    assert read_ring(path) == 1


def test_patterns_are_shell_style_and_may_be_several(tmp_path: Path) -> None:
    root = project(tmp_path, {"eu-1": 1, "eu-2": 1, "us-1": 1, "ci-x": 1})
    found = discover(root)
    assert names(matching(found, "eu-*")) == ["eu-1", "eu-2"]
    assert names(matching(found, "eu-*, us-?")) == ["eu-1", "eu-2", "us-1"]
    assert names(matching(found, "EU-*")) == []


def test_a_pattern_that_matches_nothing_is_an_error_listing_the_stacks(tmp_path: Path) -> None:
    root = project(tmp_path, {"eu-1": 1})
    with pytest.raises(SelectionError, match="eu-1"):
        select(root, "prod-*")


def test_rings_filter(tmp_path: Path) -> None:
    root = project(tmp_path, {"a": 1, "b": 2, "c": 3})
    assert names(select(root, "*", rings={2, 3})) == ["b", "c"]
    assert select(root, "*", rings={4}) == []  # a CI job for a ring without stacks


@pytest.mark.parametrize("text,want", [("1/4", Shard(1, 4)), (" 3 / 3 ", Shard(3, 3))])
def test_shard_parse(text: str, want: Shard) -> None:
    assert Shard.parse(text) == want
    assert str(want) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "2", "a/b", "1/2/3", ""])
def test_shard_parse_refuses(text: str) -> None:
    with pytest.raises(SelectionError, match="--shard"):
        Shard.parse(text)


def fleet(per_ring: dict[int, int]) -> list[StackFile]:
    return [StackFile(ring, f"r{ring}-{k:02d}", Path(f"r{ring}-{k}"))
            for ring, count in per_ring.items() for k in range(count)]


def test_the_kth_stack_of_a_ring_goes_to_shard_k_mod_n() -> None:
    stacks = fleet({1: 5, 2: 3})
    assert names(shard_of(stacks, Shard(1, 2))) == ["r1-00", "r1-02", "r1-04", "r2-00",
                                                    "r2-02"]
    assert names(shard_of(stacks, Shard(2, 2))) == ["r1-01", "r1-03", "r2-01"]
    assert shard_of(stacks, None) == stacks


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_shards_cover_every_stack_once_and_spread_each_ring(n: int) -> None:
    stacks = fleet({1: 2, 2: 7, 3: 12})
    parts = [shard_of(stacks, Shard(i, n)) for i in range(1, n + 1)]
    every = sorted(s for part in parts for s in part)
    assert every == sorted(stacks)
    for ring, count in {1: 2, 2: 7, 3: 12}.items():
        sizes = [sum(s.ring == ring for s in part) for part in parts]
        assert max(sizes) - min(sizes) <= 1
        assert sum(sizes) == count


def test_shards_do_not_depend_on_the_order_stacks_are_listed_in() -> None:
    stacks = fleet({1: 6})
    assert shard_of(list(reversed(stacks)), Shard(2, 3)) == shard_of(stacks, Shard(2, 3))


def test_an_empty_shard_is_not_an_error(tmp_path: Path) -> None:
    root = project(tmp_path, {"only": 1})
    assert select(root, "*", Shard(2, 2)) == []

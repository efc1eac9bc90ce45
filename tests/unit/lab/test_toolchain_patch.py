"""toolchain/build.sh's patch_provider, patch_langhost and patch_cli: the provider, the
Python language host and the Pulumi CLI are built with exactly the changes in
toolchain/patches/pulumi-kubernetes/, toolchain/patches/pulumi-language-python/ and
toolchain/patches/pulumi-cli/, and code that no longer matches them is refused, not
built."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from lab.paths import REPO
from tests.support.build_script import shell_function

PATCHES = sorted((REPO / "toolchain" / "patches" / "pulumi-kubernetes").glob("*.patch"))
LANGHOST_PATCHES = sorted(
    (REPO / "toolchain" / "patches" / "pulumi-language-python").glob("*.patch"))
LANGHOST_DIR = "python/cmd/pulumi-language-python/"
CLI_PATCHES = sorted((REPO / "toolchain" / "patches" / "pulumi-cli").glob("*.patch"))
FILLER = "// code the patches do not touch\n"


def patch(src: Path, dst: Path, function: str = "patch_provider") -> subprocess.CompletedProcess:
    """Runs the script's own patch function (cut out of build.sh, with patch_copy) on src."""
    functions = shell_function("patch_copy") + "\n" + shell_function(function) + "\n"
    return subprocess.run(
        ["bash", "-c", f'log() {{ echo "$*" >&2; }}; HERE="{REPO / "toolchain"}"\n'
                       + functions + f'{function} "{src}" "{dst}"'],
        capture_output=True, text=True)


def sides(patch_file: Path) -> dict[str, tuple[str, str]]:
    """{path: (old, new)}: each file as the patch's hunks see it before and after, the
    hunks joined by lines they do not touch."""
    files: dict[str, tuple[list[str], list[str]]] = {}
    old: list[str] = []
    new: list[str] = []
    for line in patch_file.read_text().splitlines(keepends=True):
        if line.startswith("+++ "):
            path = re.sub(r"^\+\+\+ b/", "", line).strip()
            old, new = files.setdefault(path, ([], []))
        elif line.startswith("--- "):
            continue
        elif line.startswith("@@"):
            old.append(FILLER)
            new.append(FILLER)
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        else:
            old.append(line[1:])
            new.append(line[1:])
    return {p: ("".join(o), "".join(n)) for p, (o, n) in files.items()}


def provider(root: Path, side: int, edit: dict[str, str] | None = None,
             patches: list[Path] = PATCHES, strip: str = "") -> Path:
    """A read-only stand-in for the module (the module cache is read-only) holding every
    patched file as the patches see it before (side 0) or after (side 1)."""
    for patch_file in patches:
        for path, texts in sides(patch_file).items():
            go = root / path.removeprefix(strip)
            go.parent.mkdir(parents=True, exist_ok=True)
            text = texts[side]
            for old, new in (edit or {}).items():
                text = text.replace(old, new)
            go.write_text(text)
            go.chmod(0o444)
    return root


def test_the_provider_is_built_with_each_change_and_nothing_else(tmp_path: Path) -> None:
    assert [p.name for p in PATCHES] == ["await-returns-the-written-version.patch",
                                         "create-keeps-the-schema.patch"]
    res = patch(provider(tmp_path / "src", 0), tmp_path / "dst")
    assert res.returncode == 0, res.stderr
    want = provider(tmp_path / "want", 1)
    for go in want.rglob("*.go"):
        assert (tmp_path / "dst" / go.relative_to(want)).read_text() == go.read_text()
    got = (tmp_path / "dst" / "pkg" / "provider" / "provider.go").read_text()
    assert "k.clientSet.RESTMapper.Reset()" in got
    assert "k.invalidateResources()" not in got
    got = (tmp_path / "dst" / "pkg" / "await" / "await.go").read_text()
    assert got.count("return notOlder(c.Context, client, live, ") == 2


def test_a_provider_whose_code_moved_is_refused(tmp_path: Path) -> None:
    moved = {"\t\tk.clientSet.RESTMapper.Reset()\n": ""}
    res = patch(provider(tmp_path / "src", 0, moved), tmp_path / "dst")
    assert res.returncode != 0
    assert "create-keeps-the-schema.patch no longer applies" in res.stderr
    assert "review toolchain/patches/pulumi-kubernetes" in res.stderr
    assert not (tmp_path / "dst").exists()


def test_a_provider_that_already_has_a_change_is_refused(tmp_path: Path) -> None:
    """A change found already made means the pin moved under the patch."""
    res = patch(provider(tmp_path / "src", 1), tmp_path / "dst")
    assert res.returncode != 0
    assert "review toolchain/patches/pulumi-kubernetes" in res.stderr


def _langhost(root: Path, side: int, edit: dict[str, str] | None = None) -> Path:
    return provider(root, side, edit, LANGHOST_PATCHES, LANGHOST_DIR)


def test_the_language_host_lists_packages_without_pip(tmp_path: Path) -> None:
    assert [p.name for p in LANGHOST_PATCHES] == ["lists-packages-without-pip.patch"]
    res = patch(_langhost(tmp_path / "src", 0), tmp_path / "dst", "patch_langhost")
    assert res.returncode == 0, res.stderr
    got = (tmp_path / "dst" / "main.go").read_text()
    assert got == (_langhost(tmp_path / "want", 1) / "main.go").read_text()
    assert '"pip", "list"' not in got
    assert 'args := []string{"-c", listPackagesScript}' in got


def test_the_script_lists_what_pip_lists() -> None:
    """The language host's script, run by this Python: the same name, version and
    location of every installed distribution as `pip list -v --format json`."""
    import json
    import sys

    text = LANGHOST_PATCHES[0].read_text()
    script = text.split("const listPackagesScript = `", 1)[1].split("`", 1)[0]
    script = "\n".join(line.removeprefix("+") for line in script.splitlines())
    ours = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout
    pips = subprocess.run([sys.executable, "-m", "pip", "list", "-v", "--format", "json"],
                          capture_output=True, text=True, check=True).stdout
    key = lambda d: (d["name"], d["version"], d["location"])  # noqa: E731
    want = sorted(map(key, json.JSONDecoder().raw_decode(pips)[0]))
    assert sorted(map(key, json.loads(ours))) == want
    assert any(name == "pulumi" for name, _, _ in want)


def _cli(root: Path, side: int, edit: dict[str, str] | None = None) -> Path:
    return provider(root, side, edit, CLI_PATCHES)


def test_the_cli_copies_same_steps_events_without_a_deep_copy(tmp_path: Path) -> None:
    assert [p.name for p in CLI_PATCHES] == ["same-step-events-without-deep-copy.patch"]
    res = patch(_cli(tmp_path / "src", 0), tmp_path / "dst", "patch_cli")
    assert res.returncode == 0, res.stderr
    got = (tmp_path / "dst" / "engine" / "events.go").read_text()
    assert got == (_cli(tmp_path / "want", 1) / "engine" / "events.go").read_text()
    # Both resource events of a custom resource's same step, and nothing else, skip the
    # deep copy; each still holds the states' locks while it copies them field by field.
    assert got.count("if m, ok := sameStepMetadata(p.Metadata); ok {") == 2
    assert "if m.Op != deploy.OpSame {" in got
    assert "if s != nil && !s.Custom {" in got
    assert "c.State = s.State.Copy()" in got


@pytest.mark.parametrize(("stand_in", "function", "patch_set", "moved"), [
    (_langhost, "patch_langhost", "pulumi-language-python",
     {"// Run the `python -m pip list -v --format json` command.\n": ""}),
    (_cli, "patch_cli", "pulumi-cli",
     {"\t\ttyp = ResourceOutputsEvent\n": "\t\ttyp = ResourceOutputsEvent // moved\n"}),
], ids=["language-host", "cli"])
def test_a_language_host_or_cli_whose_code_moved_is_refused(
        tmp_path: Path, stand_in: Callable[..., Path], function: str, patch_set: str,
        moved: dict[str, str]) -> None:
    res = patch(stand_in(tmp_path / "src", 0, moved), tmp_path / "dst", function)
    assert res.returncode != 0
    assert f"review toolchain/patches/{patch_set}" in res.stderr
    assert not (tmp_path / "dst").exists()

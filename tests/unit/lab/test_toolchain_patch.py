"""toolchain/build.sh's patch_provider: the provider is built with exactly the changes in
toolchain/patches/pulumi-kubernetes/, and a provider whose code no longer matches them is
refused, not built."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from lab.paths import REPO

PATCHES = sorted((REPO / "toolchain" / "patches" / "pulumi-kubernetes").glob("*.patch"))
FILLER = "// code the patches do not touch\n"


def patch(src: Path, dst: Path) -> subprocess.CompletedProcess:
    """Runs the script's own patch_provider function (cut out of build.sh) on src."""
    script = (REPO / "toolchain" / "build.sh").read_text()
    start = script.index("patch_provider() {")
    function = script[start:script.index("\n}\n", start) + 3]
    return subprocess.run(
        ["bash", "-c", f'log() {{ echo "$*" >&2; }}; HERE="{REPO / "toolchain"}"; '
                       'PULUMI_KUBERNETES_VERSION=4.25.0\n'
                       + function + f'patch_provider "{src}" "{dst}"'],
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


def provider(root: Path, side: int, edit: dict[str, str] | None = None) -> Path:
    """A read-only stand-in for the module (the module cache is read-only) holding every
    patched file as the patches see it before (side 0) or after (side 1)."""
    for patch_file in PATCHES:
        for path, texts in sides(patch_file).items():
            go = root / path
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
    assert "review patch_provider" in res.stderr
    assert not (tmp_path / "dst").exists()


def test_a_provider_that_already_has_a_change_is_refused(tmp_path: Path) -> None:
    """A change found already made means the pin moved under the patch."""
    res = patch(provider(tmp_path / "src", 1), tmp_path / "dst")
    assert res.returncode != 0
    assert "review patch_provider" in res.stderr

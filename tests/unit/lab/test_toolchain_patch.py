"""toolchain/build.sh's patch_provider: the provider's Create loses exactly its schema
drop after a CRD, and a provider whose code no longer matches is refused, not built."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lab.paths import REPO

CREATE_TAIL = """\tif clients.IsCRD(newInputs) {
\t\tk.clientSet.RESTMapper.Reset()
\t\tk.invalidateResources()
\t}
"""


def patch(src: Path, dst: Path) -> subprocess.CompletedProcess:
    """Runs the script's own patch_provider function (cut out of build.sh) on src."""
    script = (REPO / "toolchain" / "build.sh").read_text()
    start = script.index("patch_provider() {")
    function = script[start:script.index("\n}\n", start) + 3]
    return subprocess.run(
        ["bash", "-c", 'log() { echo "$*" >&2; }; PULUMI_KUBERNETES_VERSION=4.25.0\n'
                       + function + f'patch_provider "{src}" "{dst}"'],
        capture_output=True, text=True)


def provider(root: Path, create_tail: str) -> Path:
    go = root / "pkg" / "provider" / "provider.go"
    go.parent.mkdir(parents=True)
    go.write_text("func (k *kubeProvider) invalidateResources() {}\n\n" + create_tail)
    go.chmod(0o444)  # the module cache is read-only
    return root


def test_the_schema_drop_after_a_crd_is_removed_and_nothing_else(tmp_path: Path) -> None:
    src = provider(tmp_path / "src", CREATE_TAIL)
    res = patch(src, tmp_path / "dst")
    assert res.returncode == 0, res.stderr
    got = (tmp_path / "dst" / "pkg" / "provider" / "provider.go").read_text()
    assert got == (src / "pkg" / "provider" / "provider.go").read_text().replace(
        "\t\tk.invalidateResources()\n", "")
    assert "k.clientSet.RESTMapper.Reset()" in got


def test_a_provider_that_no_longer_drops_its_schema_there_is_refused(tmp_path: Path) -> None:
    moved = CREATE_TAIL.replace("\t\tk.clientSet.RESTMapper.Reset()\n", "")
    res = patch(provider(tmp_path / "src", moved), tmp_path / "dst")
    assert res.returncode != 0
    assert "review patch_provider" in res.stderr

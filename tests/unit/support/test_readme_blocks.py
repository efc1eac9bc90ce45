"""The README walk-through's reader: a section's blocks by heading, its values block, and
the bash session that runs them one after the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.paths import REPO
from tests.support.readme_blocks import (
    BlockFailed,
    ReadmeError,
    Session,
    assigned,
    blocks,
    section,
    split_values,
)

DOC = """# title

## First

```sh
# Your values
NAME=one
export SECRET='s'
LIST=(a b)
```

text

```sh
echo "$NAME"
```

## Second

```sh
echo second
```
"""


def test_a_section_ends_at_the_next_heading_of_its_level() -> None:
    found = blocks(DOC, "## First")
    assert [b.text for b in found] == [
        "# Your values\nNAME=one\nexport SECRET='s'\nLIST=(a b)\n", 'echo "$NAME"\n']
    assert found[0].line == 5
    assert DOC.splitlines()[found[0].line - 1] == "```sh"


def test_a_comment_inside_a_block_is_not_a_heading() -> None:
    text, _ = section(DOC, "## First")
    assert "echo \"$NAME\"" in text and "echo second" not in text


def test_a_missing_section_is_an_error() -> None:
    with pytest.raises(ReadmeError, match="no section '## Third'"):
        blocks(DOC, "## Third")


@pytest.mark.parametrize("fence", ["```yaml", "```", "```bash"])
def test_a_block_the_test_cannot_run_is_an_error(fence: str) -> None:
    doc = DOC.replace('```sh\necho "$NAME"', f'{fence}\necho "$NAME"')
    with pytest.raises(ReadmeError, match="fenced as"):
        blocks(doc, "## First")


def test_an_unclosed_block_is_an_error() -> None:
    with pytest.raises(ReadmeError, match="never closed"):
        blocks("## S\n\n```sh\necho\n", "## S")


def test_the_values_block_is_the_first_and_only_one() -> None:
    values, rest = split_values(blocks(DOC, "## First"), "## First")
    assert assigned(values) == {"NAME", "SECRET", "LIST"}
    assert [b.text for b in rest] == ['echo "$NAME"\n']
    with pytest.raises(ReadmeError, match="0 block"):
        split_values(blocks(DOC, "## Second"), "## Second")
    swapped = DOC.replace("# Your values\n", "").replace('echo "$NAME"', '# Your values')
    with pytest.raises(ReadmeError, match="the section's first"):
        split_values(blocks(swapped, "## First"), "## First")


def test_the_readmes_own_fleet_section_is_runnable_as_written() -> None:
    heading = "## Using it on your own fleet"
    values, rest = split_values(blocks((REPO / "README.md").read_text(), heading), heading)
    assert {"STACK", "HUB_KUBECONFIG", "HUB_ADMIN_KUBECONFIG", "SPOKE_ADMIN_KUBECONFIGS",
            "PROVIDER_FILE", "BACKEND_URL"} <= assigned(values)
    text = "".join(b.text for b in rest)
    for command in ("pulumi login", "pulumi stack init", "make venv", "python -m operations rights",
                    "kubectl --kubeconfig", "pulumi preview", "pulumi up",
                    "pulumi stack output spokes", "pulumi destroy"):
        assert command in text, command


def test_a_session_keeps_what_a_block_sets_and_stops_at_a_failure(tmp_path: Path) -> None:
    session = Session(tmp_path, {"PATH": "/usr/bin:/bin"}, tmp_path / "blocks",
                      tmp_path / "log")
    try:
        session.source("X=kept\nexport Y=exported\n", "first")
        assert session.source('echo "$X"\n', "second") == "kept\n"
        assert session.environment()["Y"] == "exported"
        assert session.source("read -r line || echo no-stdin\n", "stdin") == "no-stdin\n"
        with pytest.raises(BlockFailed, match=r"third failed \(bash exit code 3\)"):
            session.source("echo before\n( exit 3 )\necho after\n", "third")
    finally:
        session.close()
    assert "before" in (tmp_path / "log").read_text()
    assert "after" not in (tmp_path / "log").read_text()

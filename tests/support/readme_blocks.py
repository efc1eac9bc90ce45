"""A README section's fenced command blocks, and one bash session that runs them word for
word as a reader would: in order, in one shell, so that a variable or `PATH` a block sets
holds for the next. The section's first block is the reader's own values ("your
values"): a test leaves it out and gives its own."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

# What a block may be fenced as: shell commands, run as they are.
RUNNABLE = ("sh",)
VALUES_MARK = "# Your values"
FENCE = re.compile(r"^```(.*)$")
# A variable the values block sets: `NAME=...`, `export NAME=...`, `NAME=(...)`.
ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=")


class ReadmeError(AssertionError):
    """The README no longer has what a test runs: the section, its values block, or a
    block a reader could run."""


@dataclass(frozen=True)
class Block:
    language: str
    text: str
    line: int  # of the opening fence, 1-based, in the whole file

    @property
    def is_values(self) -> bool:
        return self.text.lstrip().startswith(VALUES_MARK)


def section(markdown: str, heading: str) -> tuple[str, int]:
    """The text under `heading` (e.g. `## Set-up`) up to the next heading of its level or
    above, and the line number its first line has in the file."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = markdown.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.rstrip("\n") == heading:
            end = next((j for j in range(i + 1, len(lines))
                        if re.match(rf"^#{{1,{level}}} ", lines[j])
                        and not _inside_fence(lines, j)), len(lines))
            return "".join(lines[i + 1:end]), i + 2
    raise ReadmeError(f"README: no section {heading!r}")


def _inside_fence(lines: list[str], index: int) -> bool:
    return sum(1 for line in lines[:index] if line.startswith("```")) % 2 == 1


def blocks(markdown: str, heading: str) -> list[Block]:
    """Every fenced block of the section, in order; a block fenced as anything but a
    runnable language (or as nothing) is an error: a test could not run it."""
    text, first = section(markdown, heading)
    found: list[Block] = []
    opened: tuple[str, int, list[str]] | None = None
    for offset, line in enumerate(text.splitlines(keepends=True)):
        fence = FENCE.match(line.rstrip("\n"))
        if opened is None and fence:
            opened = (fence.group(1).strip(), first + offset, [])
        elif opened is not None and line.rstrip("\n") == "```":
            language, at, body = opened
            if language not in RUNNABLE:
                raise ReadmeError(f"README line {at}: a block in {heading!r} fenced as "
                                  f"{language or 'nothing'!r}; fence it as one of {RUNNABLE} "
                                  "so that the test runs it")
            found.append(Block(language, "".join(body), at))
            opened = None
        elif opened is not None:
            opened[2].append(line)
    if opened is not None:
        raise ReadmeError(f"README line {opened[1]}: a block in {heading!r} is never closed")
    return found


def split_values(found: list[Block], heading: str) -> tuple[Block, list[Block]]:
    """The values block (exactly one, the section's first) and the blocks after it."""
    values = [b for b in found if b.is_values]
    if len(values) != 1 or not found[0].is_values:
        raise ReadmeError(f"README {heading!r}: {len(values)} block(s) start with "
                          f"{VALUES_MARK!r}; exactly one, the section's first, must")
    return found[0], found[1:]


def assigned(block: Block) -> set[str]:
    """The variables a values block sets."""
    return {m.group(1) for line in block.text.splitlines() if (m := ASSIGNMENT.match(line))}


class BlockFailed(AssertionError):
    def __init__(self, what: str, code: int | None, output: str) -> None:
        super().__init__(f"{what} failed (bash exit code {code}):\n{output[-8000:]}")
        self.output = output


class Session:
    """One `bash` whose stdin the test writes to. Each block is written to a file and
    sourced with stdin from /dev/null (a command that reads stdin must not eat the next
    block), under `set -euo pipefail`: a failing command ends the session, as it would
    stop a reader. The output goes to `log` as it comes."""

    def __init__(self, cwd: Path, env: dict[str, str], workdir: Path, log: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = log
        self.mark = f"__block_done_{uuid.uuid4().hex}__"
        self.count = 0
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], cwd=cwd, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._send("set -euo pipefail\n")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self.log.open("a") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()
                self.lines.put(line)
        self.lines.put(None)

    def _send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def source(self, text: str, what: str, timeout: float = 1800) -> str:
        """Runs `text` in the session as it is; returns its output. Raises BlockFailed
        with the output when the session ended (a command failed) or timed out."""
        self.count += 1
        path = self.workdir / f"{self.count:02d}.sh"
        path.write_text(text)
        with self.log.open("a") as log:
            log.write(f"\n=== {what} ({path}) ===\n")
        self._send(f"source {path} </dev/null\nprintf '\\n%s\\n' {self.mark}\n")
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.close()
                raise BlockFailed(f"{what} (timed out after {timeout:.0f}s)", None,
                                  "".join(out)) from None
            if line is None:
                raise BlockFailed(what, self.proc.wait(), "".join(out))
            if line.rstrip("\n") == self.mark:
                return "".join(out)[:-1]  # the newline printed before the mark
            out.append(line)

    def environment(self) -> dict[str, str]:
        """The session's exported environment as it is now (what a probe runs with)."""
        dump = self.workdir / "env"
        self.source(f"env -0 > {dump}\n", "the session's environment")
        text = dump.read_text()
        dump.unlink()  # it holds the passphrase
        return dict(item.split("=", 1) for item in text.split("\0") if "=" in item)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)

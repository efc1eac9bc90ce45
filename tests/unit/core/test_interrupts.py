"""A process started with SIGINT ignored gives its children the default SIGINT again."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from core.interrupts import restore_sigint

# The child reports whether SIGINT is ignored in a grandchild it starts.
CHILD = """
import signal, subprocess, sys
sys.path.insert(0, {root!r})
if {restore}:
    from core.interrupts import restore_sigint
    restore_sigint()
grandchild = subprocess.run(["grep", "SigIgn", "/proc/self/status"], capture_output=True,
                            text=True).stdout.split()[1]
print(int(grandchild, 16) & (1 << (signal.SIGINT - 1)) != 0)
"""


def _grandchild_ignores_sigint(restore: bool) -> bool:
    root = str(Path(__file__).resolve().parents[3])
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=root, restore=restore)],
        capture_output=True, text=True, check=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    return out.stdout.strip() == "True"


def test_an_ignored_sigint_is_inherited_without_it() -> None:
    assert _grandchild_ignores_sigint(restore=False) is True


def test_restored_children_get_the_default_sigint() -> None:
    assert _grandchild_ignores_sigint(restore=True) is False


def test_a_handled_sigint_is_left_as_it_is() -> None:
    before = signal.getsignal(signal.SIGINT)
    assert restore_sigint() is False
    assert signal.getsignal(signal.SIGINT) is before

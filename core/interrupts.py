"""SIGINT delivered again to the processes this one starts.

A shell without job control (a CI step, `nohup cmd &`, a script's `cmd &`) starts its
background commands with SIGINT ignored, and an ignored signal stays ignored through
every fork and exec below it. The Pulumi CLI stops each plugin it started (the
language host, every provider) with SIGINT and kills it only after a 5-second grace
period: so under such a parent every `pulumi preview` or `pulumi up` waited about 5 s
before it even started the program, and again at its end (a 2-spoke no-op preview under
such a parent: 12.6 s with SIGINT left ignored, 7.6 s with it restored, medians of 5
paired runs).

Python installs its own SIGINT handler at start-up only when SIGINT is not ignored,
and a handler (unlike "ignored") is reset to the default in a child at exec. So each
entry point that runs Pulumi installs Python's handler when it finds SIGINT ignored.
"""

from __future__ import annotations

import signal


def restore_sigint() -> bool:
    """Installs Python's own SIGINT handler if SIGINT is ignored; True if it did."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return False
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return True

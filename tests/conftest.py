"""Session-wide fixtures, and CI's rule that a skipped test fails the run."""

from __future__ import annotations

import os

import pytest

from lab.handle import Lab, ensure_lab


@pytest.fixture(scope="session")
def lab() -> Lab:
    return ensure_lab()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if os.environ.get("CI") == "true" and skipped:
        reporter.write_line(f"CI: {skipped} test(s) skipped; a skipped test fails the run")
        session.exitstatus = 1

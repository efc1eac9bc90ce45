"""Session-wide fixtures; how the suite spreads over pytest-xdist workers (`--dist
loadfile`: a module's tests on one worker; one lab per worker); the time each module
costs; CI's rule that a skipped test fails the run."""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

from core.interrupts import restore_sigint
from lab.handle import Lab, ensure_lab, wrong_mode
from lab.paths import LAB_DIR_ENV, worker_lab_dir
from lab.toolchain import with_test_tools

MODULE_SECONDS: defaultdict[str, float] = defaultdict(float)


def pytest_configure(config: pytest.Config) -> None:
    """A worker's tests, and every process they start, use that worker's own lab; the
    Pulumi commands they run can stop their plugins with SIGINT (core/interrupts.py)."""
    restore_sigint()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ[LAB_DIR_ENV] = str(worker_lab_dir(worker).root)


@pytest.fixture(scope="session")
def lab() -> Lab:
    """The worker's lab, its toolchain holding the tests' own tools (`make test` builds
    them first; a lone `pytest` builds them here), with Knative's webhooks judging every
    install as on a real spoke (`make test` brings it up so; a lab already up keeps its
    mode)."""
    with_test_tools()
    lab = ensure_lab(webhooks=True)
    problem = wrong_mode(lab)
    if problem:
        raise pytest.UsageError(problem)
    return lab


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    MODULE_SECONDS[report.nodeid.split("::", 1)[0]] += report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Setup, call and teardown summed per module, the costliest first: what each part
    of the suite costs, next to pytest's slowest single steps."""
    if not MODULE_SECONDS:
        return
    terminalreporter.section("seconds per module (setup + call + teardown)")
    rows = sorted(MODULE_SECONDS.items(), key=lambda kv: -kv[1])
    for module, seconds in rows[:25]:
        terminalreporter.write_line(f"{seconds:8.1f}s  {module}")
    rest = rows[25:]
    if rest:
        terminalreporter.write_line(
            f"{sum(s for _, s in rest):8.1f}s  {len(rest)} other modules")
    terminalreporter.write_line(f"{sum(MODULE_SECONDS.values()):8.1f}s  in all")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if os.environ.get("CI") == "true" and skipped:
        reporter.write_line(f"CI: {skipped} test(s) skipped; a skipped test fails the run")
        session.exitstatus = 1

"""Unit tests parse release files themselves: the on-disk parse cache
(knative.parsed_cache) is a fresh directory per test, never the user's; and each test
has an event loop of its own, so no order of tests in a worker changes a result."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from knative import parsed_cache


@pytest.fixture(autouse=True)
def _own_parse_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(parsed_cache, "cache_dir",
                        lambda environ=None: tmp_path / "releases-parsed")


@pytest.fixture(autouse=True)
def _own_event_loop() -> Iterator[None]:
    """Each test runs on an event loop of its own: Pulumi's runtime awaits on the current
    loop, and a loop an earlier test closed, or a future made on it, would fail the next
    test that runs a program under mocks in the same worker."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    asyncio.set_event_loop(None)
    loop.close()

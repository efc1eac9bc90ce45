"""Unit tests parse release files themselves: the on-disk parse cache
(knative.parsed_cache) is a fresh directory per test, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

from knative import parsed_cache


@pytest.fixture(autouse=True)
def _own_parse_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(parsed_cache, "cache_dir",
                        lambda environ=None: tmp_path / "releases-parsed")

"""The parse cache returns what the parse returns, and keeps only what JSON keeps."""

from __future__ import annotations

import datetime
from pathlib import Path

from knative import parsed_cache

CACHE_DIR = parsed_cache.cache_dir  # before tests/unit/conftest.py replaces it per test


def counting(result: list) -> tuple[list[int], object]:
    calls: list[int] = []

    def parse(raw: bytes) -> list:
        calls.append(1)
        return result
    return calls, parse


def test_the_same_bytes_are_parsed_once(tmp_path: Path) -> None:
    docs = [{"kind": "ConfigMap", "data": {"a": "1"}, "n": 3, "on": True, "x": None}]
    calls, parse = counting(docs)
    assert parsed_cache.parsed(b"raw", parse, tmp_path) == docs
    assert parsed_cache.parsed(b"raw", parse, tmp_path) == docs
    assert len(calls) == 1
    parsed_cache.parsed(b"other", parse, tmp_path)
    assert len(calls) == 2
    assert not list(tmp_path.glob(".parsing-*"))  # no temp file left


def test_what_json_would_change_is_parsed_every_time(tmp_path: Path) -> None:
    for docs in ([{"when": datetime.date(2026, 1, 1)}], [{"data": {80: "http"}}]):
        calls, parse = counting(docs)
        assert parsed_cache.parsed(b"raw", parse, tmp_path) == docs
        assert parsed_cache.parsed(b"raw", parse, tmp_path) == docs
        assert len(calls) == 2
    assert not list(tmp_path.glob("*.json"))


def test_a_broken_or_unwritable_cache_is_passed_by(tmp_path: Path) -> None:
    docs = [{"kind": "Namespace"}]
    calls, parse = counting(docs)
    parsed_cache.parsed(b"raw", parse, tmp_path)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    assert parsed_cache.parsed(b"raw", parse, tmp_path) == docs
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert parsed_cache.parsed(b"raw", parse, blocked / "sub") == docs
    assert len(calls) == 3


def test_the_default_place_follows_the_cache_variable(tmp_path: Path) -> None:
    assert CACHE_DIR({"KNATIVE_FLEET_CACHE": str(tmp_path)}) == tmp_path / "releases-parsed"
    assert CACHE_DIR({}) == Path.home() / ".cache" / "knative-fleet" / "releases-parsed"

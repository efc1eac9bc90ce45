"""Parsed release files kept on disk, by the hash of their bytes.

Parsing the YAML of one spoke's release files (Serving, Eventing and Kourier 1.23:
11 files, 259 documents) took 0.48 s of every `pulumi up` and `pulumi preview`, before
the first resource registers. The same bytes always parse to the same documents, so
their JSON is kept at `$KNATIVE_FLEET_CACHE/releases-parsed/<sha256>.json` (default
`~/.cache/knative-fleet`), which loaded the same files in 0.02 s. A document
set that JSON would change (a YAML date, a non-string key) is not kept; a cache that
cannot be read or written is passed by: the release is parsed as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from core.settings import settings

CACHE_ENV = "KNATIVE_FLEET_CACHE"
# Bumped when what the parse returns changes shape, so older entries are not read.
FORMAT = "1"


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    return settings(environ).cache / "releases-parsed"


def parsed(raw: bytes, parse: Callable[[bytes], list], where: Path | None = None) -> list:
    """`parse(raw)`, from the cache when these bytes were parsed before."""
    folder = where or cache_dir()
    path = folder / f"{hashlib.sha256(FORMAT.encode() + raw).hexdigest()}.json"
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_bytes())
    docs = parse(raw)
    _keep(folder, path, docs)
    return docs


def _keep(folder: Path, path: Path, docs: list) -> None:
    try:
        text = json.dumps(docs, separators=(",", ":"))
    except (TypeError, ValueError):
        return
    if json.loads(text) != docs:
        return
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".parsing-")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

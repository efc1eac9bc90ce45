"""A component's CRD bodies as the CRDs-first step holds them (fleet.crds_first): base64
of gzipped JSON, with a digest of them, the same in every process; and the names of the
step's state that its provider, the planner and the review share. Plain data only: the
step's provider process and the live review import it without the planner."""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# The step's input when the entry deletes its CRDs on destroy (`deleteCrdsOnDestroy`).
DELETE_ON_DESTROY = "deleteOnDestroy"


def held_key(body: Mapping[str, Any]) -> str:
    """How a holding step names one object it holds: `Kind/name`, or
    `Kind/namespace/name` (a ClusterRole and its binding share a name; a ServiceAccount
    and a Service too)."""
    meta = body["metadata"]
    namespace = meta.get("namespace")
    return (f"{body['kind']}/{namespace}/{meta['name']}" if namespace
            else f"{body['kind']}/{meta['name']}")


def _text(bodies: Iterable[Mapping[str, Any]]) -> str:
    return json.dumps(list(bodies), sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=16)
def _packed(text: str) -> tuple[str, str]:
    """(digest, manifest) of the bodies' JSON text; spokes with the same release share it."""
    data = text.encode()
    return ("sha256:" + hashlib.sha256(data).hexdigest(),
            base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode())


def encode(bodies: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(digest, manifest): a digest of the CRD bodies and the bodies themselves as
    base64 of gzipped JSON (the same bodies give the same strings in every process)."""
    return _packed(_text(bodies))


def decode(manifest: str) -> list[dict[str, Any]]:
    """The CRD bodies back from `encode`'s manifest."""
    bodies = json.loads(gzip.decompress(base64.b64decode(manifest)))
    if not isinstance(bodies, list) or not all(isinstance(b, dict) for b in bodies):
        raise ValueError("the CRDs-first manifest is not a list of objects")
    return bodies

"""A component's CRDs applied in one step before their typed resources, as plain data.

pulumi-kubernetes (4.25) drops its cached OpenAPI schema after every
CustomResourceDefinition it *creates*, and its next call fetches `/openapi/v2` again,
for which the spoke's API server rebuilds the schema of every CRD it serves: one rebuild
per CRD created. Reading (importing) a CRD drops nothing. So each component's CRDs are
applied by one dynamic resource (components.crds_first: server-side apply with the
fleet's field manager, forced, then a wait for `Established`), and each typed
`CustomResourceDefinition` resource that is new to the stack then imports the CRD that
step applied instead of creating it. The typed resources keep their names, types and
URNs, so a stack an earlier release installed keeps every CRD as it is.

The step's inputs hold the CRD bodies exactly as the typed resources apply them,
compressed: the state already holds each CRD twice (the typed resource's inputs and
outputs), and the checkpoint is written after every step.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fleet.plan import ComponentInstall, PlannedObject
from knative.plan import Stage


def step_name(spoke: str, namespace: str) -> str:
    """The resource name of a component's CRDs-first step."""
    return f"{spoke}:{namespace}/crds-first"


def crd_objects(component: ComponentInstall) -> tuple[PlannedObject, ...]:
    """The component's CRDs, in their registration order."""
    return tuple(o for s in component.stages if s.stage is Stage.CRDS for o in s.objects)


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


def step_inputs(component: ComponentInstall, spoke: str, connection: Any,
                plugin_timeout_s: float) -> dict[str, Any]:
    """The inputs of the component's CRDs-first step (components.crds_first registers
    them; the offline review plans the same): the CRD names, the digest its provider's
    diff compares, the bodies and how to reach the spoke."""
    assert component.crds_first is not None
    bodies = [o.registered_body for o in crd_objects(component)]
    digest, manifest = encode(bodies)
    return {"id": component.crds_first, "spoke": spoke,
            "crds": [b["metadata"]["name"] for b in bodies], "digest": digest,
            "manifest": manifest, "connection": connection,
            "pluginTimeoutSeconds": plugin_timeout_s}

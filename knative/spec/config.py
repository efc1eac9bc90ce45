"""Per-entry transforms of release objects (operator parity): pure functions
over the rendered objects, applied after `manifests.render`."""

from __future__ import annotations

from collections.abc import Mapping

from core.errors import TransformError
from knative.manifests import Rendered


def merge_config(rendered: Rendered, config: Mapping[str, Mapping[str, str]]) -> Rendered:
    """The operator's `spec.config`: `{configmap: {key: value}}` merged into the release's
    ConfigMaps (the `config-` prefix is optional); keys the user does not name keep the
    release values. A ConfigMap the release does not have is an error, not a new object."""
    by_name = {o["metadata"]["name"]: o for o in rendered.namespaced if o["kind"] == "ConfigMap"}
    for name, values in config.items():
        target = by_name.get(name) or by_name.get(f"config-{name}")
        if target is None:
            known = sorted(n for n in by_name if n.startswith("config-"))
            raise TransformError(
                f"config names ConfigMap {name!r}, which this release does not have; "
                f"known: {', '.join(known)}")
        data = dict(target.get("data") or {})
        data.update({k: str(v) for k, v in values.items()})
        target["data"] = data
    return rendered

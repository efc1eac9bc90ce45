"""spec.config: the operator's ConfigMapTransform (pkg/reconciler/common/config_maps.go).

`{configmap: {key: value}}` merged into the release's ConfigMaps. Other transforms that
write a ConfigMap key ask `user_config_sets` first: the user's `config` wins.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.errors import TransformError
from knative.objects import Rendered, by_name
from models.component import ComponentSpec


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """The entry's `config` merged into the release's ConfigMaps (the `config-` prefix is
    optional); keys the user does not name keep the release values. A ConfigMap the
    release does not have is an error, not a new object."""
    configmaps = by_name(rendered.namespaced, "ConfigMap")
    for name, values in spec.config.items():
        target = configmaps.get(name) or configmaps.get(f"config-{name}")
        if target is None:
            known = sorted(n for n in configmaps if n.startswith("config-"))
            raise TransformError(
                f"config names ConfigMap {name!r}, which this release does not have; "
                f"known: {', '.join(known)}")
        data = dict(target.get("data") or {})
        data.update({k: str(v) for k, v in values.items()})
        target["data"] = data
    return rendered


def user_config_sets(user_config: Mapping[str, Mapping[str, str]] | None, configmap: str,
                     keys: tuple[str, ...]) -> bool:
    """Whether the user's `config` (ConfigMap names with or without `config-`) names
    any of keys in configmap: the operator's rule is that the user's config wins."""
    if not user_config:
        return False
    short = configmap.removeprefix("config-")
    for name in (short, f"config-{short}"):
        values = user_config.get(name) or {}
        if any(key in values for key in keys):
            return True
    return False

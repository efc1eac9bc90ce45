"""Kubernetes objects as plain dicts: the lookups and edits that render, the spec
transforms, the plan and the Spoke component share."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from core.errors import TransformError


@dataclass
class Rendered:
    """One component's objects, split by how they are owned and ordered."""

    crds: list[dict]
    cluster_scoped: list[dict]  # non-CRD cluster-scoped objects, never owned
    namespaced: list[dict]  # all in the install namespace, owned by the anchor
    namespaces_dropped: list[str]  # Namespace objects of the release; we create our own
    # Namespaced objects that must stay in another namespace (manifests.PINNED_OBJECTS):
    # never owned by the anchor (cross-namespace owner), deleted by Pulumi like cluster
    # objects.
    external: list[dict] = field(default_factory=list)
    # Labels and annotations of the last Namespace object of the release (in apply order):
    # what the operator's applies of each release Namespace, moved into the install
    # namespace, leave on it (each apply replaces the previous one's).
    namespace_metadata: dict = field(default_factory=dict)


# Where each kind with a pod template keeps its pod spec.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}


# --- reading one object ---------------------------------------------------------------------

def dig(obj: Any, path: Sequence[str] | None) -> Any:
    """obj[path[0]][path[1]]..., or None where a step is missing (or path is None)."""
    if path is None:
        return None
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def group(api_version: str) -> str:
    """The API group of an apiVersion: "apps" for "apps/v1", "" for the core "v1"."""
    return api_version.rpartition("/")[0]


def group_kind(obj: Mapping) -> tuple[str, str]:
    """(API group, kind) of an object: what a CRD defines."""
    return group(obj["apiVersion"]), obj["kind"]


def defined_kinds(crds: Iterable[Mapping]) -> set[tuple[str, str]]:
    """The (group, kind) pairs these CustomResourceDefinitions define."""
    return {(c["spec"]["group"], c["spec"]["names"]["kind"]) for c in crds}


def pod_spec(obj: Mapping) -> dict | None:
    """The pod spec of an object with a pod template (POD_SPEC_PATHS), or None."""
    spec = dig(obj, POD_SPEC_PATHS.get(obj.get("kind", "")))
    return spec if isinstance(spec, dict) else None


def pod_template_spec(obj: dict) -> dict:
    """The pod spec of a Deployment, created empty where the object has none."""
    return obj.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})


def all_containers(spec: Mapping) -> list[dict]:
    """Init containers and containers of a pod spec."""
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def upsert_by_name(parent: dict, key: str, item: dict) -> None:
    """parent[key] (a list of named entries: env, volumes, volumeMounts) with the entry of
    item's name replaced by item, or item appended."""
    items = list(parent.get(key) or [])
    for i, existing in enumerate(items):
        if existing.get("name") == item["name"]:
            items[i] = item
            break
    else:
        items.append(item)
    parent[key] = items


# --- finding objects of a release ----------------------------------------------------------

def all_objects(rendered: Rendered) -> Iterator[dict]:
    """Every object a transform may touch (namespaced first, then pinned ones)."""
    yield from rendered.namespaced
    yield from rendered.external


def of_kind(rendered: Rendered, *kinds: str) -> list[dict]:
    """The objects of `kinds` a transform may touch."""
    return [o for o in all_objects(rendered) if o.get("kind") in kinds]


def find(objects: Iterable[dict], kind: str, name: str, api_group: str | None = None
         ) -> dict | None:
    """The first object of `kind` (and `api_group`, if given) named `name`."""
    for obj in objects:
        if obj.get("kind") != kind or (obj.get("metadata") or {}).get("name") != name:
            continue
        if api_group is not None and group(obj["apiVersion"]) != api_group:
            continue
        return obj
    return None


def require(objects: Iterable[dict], kind: str, name: str, *, why: str, hint: str,
            api_group: str | None = None) -> dict:
    """find(...), or a TransformError saying that `why` needs the object: a transform
    never silently skips what it was asked to change."""
    obj = find(objects, kind, name, api_group)
    if obj is None:
        raise TransformError(
            f"{why} changes the {kind} {name!r}, which this release does not have; {hint}")
    return obj


def by_name(objects: Iterable[dict], kind: str) -> dict[str, dict]:
    """The objects of `kind` by name (for a name given twice, the last one)."""
    return {o["metadata"]["name"]: o for o in objects if o.get("kind") == kind}


def workload_matches(key: str, name: str, kind: str) -> bool:
    """Whether a user-given workload name means this object: the exact name, or for
    Jobs the release's generateName (ending in '-'), which render turned into a prefix."""
    if key == name:
        return True
    return kind == "Job" and key.endswith("-") and name.startswith(key)


def not_in_release(what: str, name: str, known: Iterable[str],
                   hint: str = "") -> TransformError:
    """The error for a user-given name that matches nothing: it lists the known names,
    since a typo must not silently leave a spoke unconfigured."""
    return TransformError(
        f"{what} names {name!r}, which this release does not have{hint}; "
        f"known: {', '.join(sorted(set(known))) or '(none)'}")


class Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)


def named_objects(rendered: Rendered, kind: str, overrides: Sequence[N],
                  what: str) -> list[tuple[N, dict]]:
    """Each override with the object of `kind` its name names; a name the release does not
    have is a TransformError (not_in_release) for the `what` key."""
    objects = by_name(all_objects(rendered), kind)
    pairs = []
    for override in overrides:
        obj = objects.get(override.name)
        if obj is None:
            raise not_in_release(what, override.name, objects)
        pairs.append((override, obj))
    return pairs

"""spec.registry: the operator's ImageTransform (pkg/reconciler/common/images.go).

Image overrides and pull secrets for air-gapped or mirrored fleets (models.registry),
applied to the rendered release objects.

Lookup order per container, as the operator's ImageTransform does it:
`override["<workload>/<container>"]`, then `override["<container>"]`, then `default` with
`${NAME}` replaced by the image's name: the last path element of the release image,
without tag or digest (the operator's getImageName; `.../eventing/cmd/webhook@sha256:..`
gives `webhook`), or the container name when the image has no `/`. Caching `Image`
objects are keyed by their own name (`override["queue-proxy"]`, the operator's
updateCachingImage) and get the default the same way (`.../serving/cmd/queue@sha256:..`
gives `queue`). Env vars are keyed by their own name (`override["APISERVER_RA_IMAGE"]`)
and never get the default, since most env vars are not images.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.errors import TransformError
from knative.objects import Rendered, all_containers, all_objects, pod_spec, workload_matches
from models.component import ComponentSpec
from models.registry import NAME_VARIABLE, Registry

CACHING_IMAGE_API_VERSION = "caching.internal.knative.dev/v1alpha1"
QUEUE_PROXY = "queue-proxy"
CONFIG_DEPLOYMENT = "config-deployment"
QUEUE_SIDECAR_IMAGE_KEY = "queue-sidecar-image"

# The kinds whose pod templates get the registry's images and pull secrets (the
# operator's ImageTransform has no CronJob; Knative releases have none either).
IMAGE_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"})


def image_name(image: str) -> str | None:
    """The operator's getImageName: the last path element of an image reference without
    its tag or digest (`gcr.io/knative-releases/knative.dev/serving/cmd/queue@sha256:..`
    -> `queue`); None for an image without `/`, which then goes by its container name."""
    if "/" not in image:
        return None
    last = image.rsplit("/", 1)[1]
    return last.split("@", 1)[0].split(":", 1)[0]


def _pod_spec(obj: Mapping) -> dict | None:
    """The pod spec of an object of IMAGE_KINDS, or None."""
    return pod_spec(obj) if obj.get("kind") in IMAGE_KINDS else None


class _Lookup:
    """The operator's override/default resolution, remembering which keys were used."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.used: set[str] = set()
        # "<workload>/<container>" keys, split once.
        self.scoped = {k: tuple(k.split("/", 1)) for k in registry.override if "/" in k}

    def for_container(self, container: dict, workload: str, kind: str) -> str | None:
        for key, (parent, name) in self.scoped.items():
            if name == container["name"] and workload_matches(parent, workload, kind):
                self.used.add(key)
                return self.registry.override[key]
        return self.for_name(container["name"], image=container.get("image") or "")

    def for_name(self, name: str, *, image: str | None) -> str | None:
        """override[name]; else, unless image is None (env vars), the default filled in
        with the image's name, or with `name` when the image has no `/`."""
        if name in self.registry.override:
            self.used.add(name)
            return self.registry.override[name]
        if image is not None and self.registry.default:
            return self.registry.default.replace(NAME_VARIABLE, image_name(image) or name)
        return None


def _add_pull_secrets(secrets: list | None, wanted: list[dict]) -> list:
    """secrets plus each wanted one not already named (the operator appends blindly;
    duplicates would only churn diffs)."""
    out = list(secrets or [])
    have = {s.get("name") for s in out if isinstance(s, dict)}
    out.extend(s for s in wanted if s["name"] not in have)
    return out


def _rewrite_pod_spec(spec: dict, workload: str, kind: str, lookup: _Lookup,
                      secrets: list[dict]) -> None:
    for container in all_containers(spec):
        image = lookup.for_container(container, workload, kind)
        if image:
            container["image"] = image
        for env in container.get("env") or []:
            image = lookup.for_name(env["name"], image=None)
            if image:
                # A value and a valueFrom together are invalid; the override is the value.
                env.pop("valueFrom", None)
                env["value"] = image
    if secrets:
        spec["imagePullSecrets"] = _add_pull_secrets(spec.get("imagePullSecrets"), secrets)


def _known_keys(rendered: Rendered) -> list[str]:
    """Override keys this release would accept, for the error message."""
    containers: set[str] = set()
    images: set[str] = set()
    envs: set[str] = set()
    for obj in all_objects(rendered):
        spec = _pod_spec(obj)
        if spec is not None:
            for c in all_containers(spec):
                containers.add(c["name"])
                containers.add(f"{obj['metadata']['name']}/{c['name']}")
                envs.update(e["name"] for e in c.get("env") or []
                            if e["name"].endswith("_IMAGE"))
        elif obj.get("kind") == "Image" and obj.get("apiVersion") == CACHING_IMAGE_API_VERSION:
            images.add(obj["metadata"]["name"])
    return sorted(containers | images | envs)


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """Rewrites images of every workload container and init container (Deployments,
    StatefulSets, DaemonSets, Jobs, CronJobs; the operator skips init containers and
    CronJobs, which would leave a mirrored fleet pulling those from upstream), of caching
    `Image` objects, of env vars the
    override names, and Serving's `config-deployment` `queue-sidecar-image` (the image
    Knative injects as the queue-proxy sidecar, which the operator only sets on the
    caching Image; see knative/operator#2313); adds `imagePullSecrets` to every pod spec
    and caching Image. Runs before `config`, so that an explicit
    `config.deployment.queue-sidecar-image` wins. An override key that names nothing in
    the release is an error (a typo would otherwise pull from the public registry)."""
    registry = spec.registry
    if registry is None:
        return rendered
    lookup = _Lookup(registry)
    secrets = [s.model_dump() for s in registry.image_pull_secrets]
    for obj in all_objects(rendered):
        kind = obj.get("kind", "")
        spec = _pod_spec(obj)
        if spec is not None:
            _rewrite_pod_spec(spec, obj["metadata"]["name"], kind, lookup, secrets)
        elif kind == "Image" and obj.get("apiVersion") == CACHING_IMAGE_API_VERSION:
            image_spec = obj.setdefault("spec", {})
            image = lookup.for_name(obj["metadata"]["name"],
                                    image=image_spec.get("image") or "")
            if image:
                image_spec["image"] = image
            if secrets:
                image_spec["imagePullSecrets"] = _add_pull_secrets(
                    image_spec.get("imagePullSecrets"), secrets)
        elif kind == "ConfigMap" and obj["metadata"]["name"] == CONFIG_DEPLOYMENT:
            data = obj.get("data") or {}
            if QUEUE_SIDECAR_IMAGE_KEY in data:
                # Keyed like the queue-proxy caching Image, named like its image.
                image = lookup.for_name(QUEUE_PROXY, image=data[QUEUE_SIDECAR_IMAGE_KEY] or "")
                if image:
                    data[QUEUE_SIDECAR_IMAGE_KEY] = image
    unused = sorted(set(registry.override) - lookup.used)
    if unused:
        raise TransformError(
            f"registry.override names {', '.join(map(repr, unused))}, which this release "
            f"does not have (keys are container names, '<workload>/<container>', caching "
            f"Image names or env var names); known: {', '.join(_known_keys(rendered))}")
    return rendered

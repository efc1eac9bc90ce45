"""Rendered releases and plans from the release mirror (lab.paths.RELEASES), as the
tests of render, the spec transforms and the plan use them: each file read and rendered
once per run, and a fresh copy per call, since transforms change the objects in place."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from core.names import CR_NAME, NAMESPACE, Component
from knative import manifests, release_fetch, releases
from knative.manifests import Rendered
from knative.plan import InstallPlan, plan_spoke
from lab.paths import RELEASES
from models.component import EventingSpec, ServingSpec

RELEASE_BASE = f"file://{RELEASES}"
VERSION = "1.23.0"


@functools.lru_cache(maxsize=16)
def _documents(component: Component, ingress: str | None, version: str) -> tuple[dict, ...]:
    urls = releases.release_urls(RELEASE_BASE, component, version, ingress=ingress)
    return tuple(doc for url in urls for doc in release_fetch.load_documents(url))


def release_documents(component: Component, ingress: str | None = "kourier",
                      version: str = VERSION) -> list[dict]:
    """The release files' documents in apply order (Serving with `ingress`'s file), as
    shared read-only dicts: render copies them, a test that edits one copies it first."""
    return list(_documents(component, ingress, version))


@functools.lru_cache(maxsize=16)
def _rendered(component: Component, ingress: str | None, version: str) -> Rendered:
    return manifests.render(release_documents(component, ingress, version),
                            namespace=NAMESPACE[component], cr_name=CR_NAME[component],
                            component=component)


def rendered(component: Component, ingress: str | None = "kourier",
             version: str = VERSION) -> Rendered:
    """The release rendered into its install namespace, without any spec applied: a
    fresh copy per call."""
    return copy.deepcopy(_rendered(component, ingress, version))


def serving(ingress: str | None = "kourier") -> Rendered:
    return rendered("serving", ingress)


def eventing() -> Rendered:
    return rendered("eventing")


def find(rendered: Rendered, kind: str, name: str) -> dict:
    """The namespaced (or pinned) object of `kind` named `name`."""
    return next(o for o in [*rendered.namespaced, *rendered.external]
                if o["kind"] == kind and o["metadata"]["name"] == name)


def without(rendered: Rendered, kind: str, name: str) -> Rendered:
    """rendered without the namespaced object of `kind` named `name`."""
    rendered.namespaced = [o for o in rendered.namespaced
                           if not (o["kind"] == kind and o["metadata"]["name"] == name)]
    return rendered


def serving_plan(installed: str | None = None, **serving: object) -> InstallPlan:
    """The plan of a fresh spoke (or one running `installed`) for a Serving spec written
    the operator's way, e.g. serving_plan(version="1.23", allowMinorSkip=True)."""
    installed_map = {NAMESPACE["serving"]: installed} if installed else {}
    spec = ServingSpec.model_validate(serving)
    return plan_spoke(spec, None, RELEASE_BASE, {}, installed_map)[0]


def eventing_plan(**eventing: object) -> InstallPlan:
    """The plan of a fresh spoke for an Eventing spec written the operator's way."""
    spec = EventingSpec.model_validate({"version": "1.23", **eventing})
    return plan_spoke(None, spec, RELEASE_BASE, {})[0]


def replicas(rendered: Rendered, name: str, kind: str = "Deployment") -> Any:
    """spec.replicas of the workload (None when the release leaves it to Kubernetes)."""
    return find(rendered, kind, name)["spec"].get("replicas")


def hpa_range(rendered: Rendered, name: str) -> tuple[int, int]:
    """(minReplicas, maxReplicas) of the HorizontalPodAutoscaler `name`."""
    spec = find(rendered, "HorizontalPodAutoscaler", name)["spec"]
    return spec["minReplicas"], spec["maxReplicas"]


def copy_release(root: Path, repo: str, version: str, *, like: str = VERSION) -> Path:
    """Release `version` of `repo` (e.g. "knative-extensions/net-kourier") under the
    temporary release base `root`, made from the mirror's `like` release with every
    `like` in its files changed to `version`: a release the built-in tables do not know.
    Returns its directory."""
    source = RELEASES / repo / "releases" / "download" / f"knative-v{like}"
    target = root / repo / "releases" / "download" / f"knative-v{version}"
    target.mkdir(parents=True)
    for file in source.iterdir():
        (target / file.name).write_text(file.read_text().replace(like, version))
    return target

"""spec.manifests and spec.additionalManifests: the operator's TargetManifest and
TargetAdditionalManifest (pkg/reconciler/common/releases.go).

Not a transform of the rendered objects: the keys decide which files a component
installs. `manifests` (overwrite mode) names exactly the files to install instead of the
release's, ingress and sources included; `additionalManifests` (append mode) are applied
after them, and an object with the same identity replaces the release's.
"""

from __future__ import annotations

from knative import releases
from models.component import ComponentSpec

VERSION_VARIABLE = "${VERSION}"


def component_urls(component: releases.Component, spec: ComponentSpec, release_base: str,
                   version: str, ingress: str | None) -> list[str]:
    """The files one component installs, in apply order: the release's (or the
    entry's `manifests`, which replace them all), then `additionalManifests`."""
    if spec.manifests is not None:
        urls = list(spec.manifests)
    else:
        urls = releases.release_urls(release_base, component, version, ingress=ingress)
    urls += spec.additional_manifests
    return [u.replace(VERSION_VARIABLE, version) for u in urls]

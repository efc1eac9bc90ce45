"""Which files one component installs: the operator's TargetManifest,
TargetAdditionalManifest (pkg/reconciler/common/releases.go) and GetSourcePath
(pkg/reconciler/knativeeventing/source/source.go).

The spec keys here pick files rather than change the rendered objects, so they are no
transforms. `manifests` (overwrite mode) names exactly the files to install instead of
the release's, ingress and sources included; `additionalManifests` (append mode) are
applied after them, and an object with the same identity replaces the release's.
`source` (models.source) enables the sources whose release files are loaded beside
Eventing's (releases.SOURCE_FILES says which files each source has).
"""

from __future__ import annotations

from core.names import Component
from knative import releases
from models.component import ComponentSpec
from models.source import EventingSources

VERSION_VARIABLE = "${VERSION}"


def component_urls(component: Component, spec: ComponentSpec, release_base: str,
                   version: str, ingress: str | None) -> list[str]:
    """The files one component installs, in apply order: the release's (or the
    entry's `manifests`, which replace them all), then `additionalManifests`."""
    if spec.manifests is not None:
        urls = list(spec.manifests)
    else:
        urls = releases.release_urls(release_base, component, version, ingress=ingress)
    urls += spec.additional_manifests
    return [u.replace(VERSION_VARIABLE, version) for u in urls]


def enabled_sources(spec: ComponentSpec) -> list[str]:
    """The sources whose release files are loaded for this spec (none for Serving): also
    when `manifests` replaces Eventing's own files, as the operator's AppendTargetSources
    appends the enabled sources after a `manifests` list too."""
    sources: EventingSources | None = getattr(spec, "source", None)
    if sources is None:
        return []
    return sources.enabled_names()

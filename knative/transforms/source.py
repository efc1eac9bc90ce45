"""spec.source: the operator's GetSourcePath (pkg/reconciler/knativeeventing/source/source.go).

Not a transform of the rendered objects: the key (models.source) decides which source
release files are loaded beside Eventing's (releases.SOURCE_FILES says which files each
source has).
"""

from __future__ import annotations

from models.component import ComponentSpec
from models.source import EventingSources


def enabled_sources(spec: ComponentSpec) -> list[str]:
    """The sources whose release files are loaded for this spec (none for Serving): also
    when `manifests` replaces Eventing's own files, as the operator's AppendTargetSources
    appends the enabled sources after a `manifests` list too."""
    sources: EventingSources | None = getattr(spec, "source", None)
    if sources is None:
        return []
    return sources.enabled_names()

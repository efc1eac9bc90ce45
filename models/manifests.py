"""spec.manifests and spec.additionalManifests: the models of the operator's
TargetManifest and TargetAdditionalManifest (pkg/reconciler/common/releases.go).

`manifests` (overwrite mode) names exactly the files to install instead of the
release's, ingress and sources included; `additionalManifests` (append mode) are applied
after them, and an object with the same identity replaces the release's.
knative.component_files says which files a component then installs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field

from core.strict import Strict


class ManifestUrl(Strict):
    """The operator's `{URL: ...}` manifest entry."""

    url: Annotated[str, Field(min_length=1, alias="URL")]


def manifest_location(value: str | ManifestUrl) -> str:
    """A release file as a URL: http(s):// and file:// as given, anything else a path
    relative to the Pulumi project. `${VERSION}` is substituted at plan time."""
    text = value.url if isinstance(value, ManifestUrl) else value
    if "://" in text:
        if not text.startswith(("https://", "http://", "file://")):
            raise ValueError(f"manifest {text!r}: use an https://, http:// or file:// URL, "
                             "or a file path")
        return text
    return "file://" + str(Path(text).resolve())


def _locations(value: list[str | ManifestUrl]) -> list[str]:
    return [manifest_location(v) for v in value]


def _not_empty(value: list[str]) -> list[str]:
    if not value:
        raise ValueError("manifests must name at least one file; leave it out to "
                         "install the release files")
    return value


ManifestSource = Annotated[str | ManifestUrl, Field(union_mode="left_to_right")]
# `additionalManifests`: the files as URLs.
ManifestList = Annotated[list[ManifestSource], AfterValidator(_locations)]
# `manifests`: the same, and at least one (leaving it out installs the release files).
Manifests = Annotated[list[ManifestSource], AfterValidator(_locations),
                      AfterValidator(_not_empty)]

"""Which upstream files make a Knative release, and reading them once.

A fleet of a hundred spokes on the same version must fetch and parse each release
file once, and a version the user did not mean must never be installed: "1.23"
means the newest patch known here, anything unparsable or unknown is an error.
"""

from __future__ import annotations

import functools
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Literal

import yaml

from core.errors import ReleaseError

DEFAULT_BASE = "https://github.com"
FETCH_TIMEOUT_SECONDS = 60

Component = Literal["serving", "eventing"]

# Patch releases known to exist, per component. "x.y" resolves against this table;
# "x.y.z" is taken as given (the fetch says whether it exists).
KNOWN_VERSIONS: dict[str, tuple[str, ...]] = {
    "serving": ("1.22.1", "1.23.0"),
    "eventing": ("1.22.2", "1.23.0"),
    # Serving ingresses, released per Serving minor.
    "kourier": ("1.22.1", "1.23.0"),
    "istio": ("1.22.1", "1.23.0"),
    "gateway-api": ("1.22.1", "1.23.0"),
    "contour": ("1.22.2", "1.23.0"),
    # Eventing sources, released per Eventing minor.
    "kafka": ("1.23.0",),
    "rabbitmq": ("1.23.0",),
    "redis": ("1.23.0",),
    "github": ("1.23.0",),
    "gitlab": ("1.23.0",),
    "ceph": ("1.23.0",),
}

# Files in apply order, as the Knative Operator bundles them (its hack/update-manifests
# downloads the same artifacts into kodata). serving-core.yaml and eventing-core.yaml
# repeat every CRD of the *-crds.yaml file (identical objects); the CRD file is kept
# first so CRDs come before the objects that use them, and render() dedupes.
SERVING_FILES = (
    "serving-crds.yaml",
    "serving-core.yaml",
    "serving-hpa.yaml",
)
SERVING_POST_INSTALL = ("serving-post-install-jobs.yaml",)
EVENTING_FILES = (
    "eventing-crds.yaml",
    "eventing-core.yaml",
    "in-memory-channel.yaml",
    "mt-channel-broker.yaml",
    "eventing-post-install.yaml",
    # Not eventing-tls-networking.yaml: it holds only cert-manager.io/v1 Certificates,
    # which fail to apply on a spoke without cert-manager's CRDs. The operator applies
    # it only when transport encryption is on and cert-manager is installed; this
    # product does not offer transport encryption yet.
)

# ingress name -> (GitHub repository under knative-extensions, release file)
INGRESS_FILES: dict[str, tuple[str, str]] = {
    "kourier": ("net-kourier", "kourier.yaml"),
    "istio": ("net-istio", "net-istio.yaml"),
    "gateway-api": ("net-gateway-api", "net-gateway-api.yaml"),
    "contour": ("net-contour", "net-contour.yaml"),
}

# eventing source name -> (GitHub repository under knative-extensions, files in order)
SOURCE_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "kafka": (
        "eventing-kafka-broker",
        (
            "eventing-kafka-controller.yaml",
            "eventing-kafka-source.yaml",
            "eventing-kafka-post-install.yaml",
        ),
    ),
    "rabbitmq": ("eventing-rabbitmq", ("rabbitmq-source.yaml",)),
    "redis": ("eventing-redis", ("redis-source.yaml",)),
    "github": ("eventing-github", ("github.yaml",)),
    "gitlab": ("eventing-gitlab", ("gitlab.yaml",)),
    "ceph": ("eventing-ceph", ("ceph.yaml",)),
}

_MINOR = re.compile(r"([0-9]+)\.([0-9]+)")
_PATCH = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)")

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _RedefinableAnchorLoader(yaml.SafeLoader):
    """SafeLoader that lets a later anchor replace an earlier one of the same name.

    YAML 1.2 and Go's yaml (kubectl) allow it and some releases rely on it
    (eventing-github repeats `&everything`); libyaml and PyYAML refuse it.
    """

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if not self.check_event(yaml.AliasEvent):
            anchor = self.peek_event().anchor
            if anchor is not None:
                self.anchors.pop(anchor, None)
        return super().compose_node(parent, index)


def _known(component: str) -> tuple[str, ...]:
    try:
        return KNOWN_VERSIONS[component]
    except KeyError:
        raise ReleaseError(
            f"unknown Knative component {component!r}; known: {', '.join(KNOWN_VERSIONS)}"
        ) from None


def _patch_key(version: str) -> tuple[int, int, int]:
    major, minor, patch = (int(p) for p in version.split("."))
    return major, minor, patch


def _newest_for_minor(component: str, major: int, minor: int) -> str | None:
    matching = [
        v for v in _known(component) if _patch_key(v)[:2] == (major, minor)
    ]
    return max(matching, key=_patch_key) if matching else None


def resolve_version(component: str, requested: str) -> str:
    """Resolve "x.y" to the newest known patch of that minor, "x.y.z" to itself.

    Raises ReleaseError for anything else, and for a minor with no known patch,
    rather than falling back to some other version.
    """
    known = _known(component)
    value = requested.strip() if isinstance(requested, str) else requested
    if isinstance(value, str) and _PATCH.fullmatch(value):
        return ".".join(str(p) for p in _patch_key(value))
    if isinstance(value, str) and (m := _MINOR.fullmatch(value)):
        newest = _newest_for_minor(component, int(m.group(1)), int(m.group(2)))
        if newest is not None:
            return newest
        raise ReleaseError(
            f"no known {component} release for version {requested!r}; "
            f"known versions: {', '.join(known)}. Use one of those minors, "
            f"or an exact x.y.z version that the release mirror has"
        )
    raise ReleaseError(
        f"invalid {component} version {requested!r}: expected \"x.y\" (newest known patch) "
        f"or \"x.y.z\"; known versions: {', '.join(known)}"
    )


def _minor_of(version: str) -> tuple[int, int]:
    m = _PATCH.fullmatch(version) or _MINOR.fullmatch(version)
    if not m:
        raise ReleaseError(f"invalid version {version!r}: expected \"x.y\" or \"x.y.z\"")
    return int(m.group(1)), int(m.group(2))


def _companion_version(component: str, parent: str, parent_version: str) -> str:
    """Newest known patch of an ingress/source for the parent's minor: they are
    released in lockstep per minor, but their patch numbers differ."""
    _known(component)
    major, minor = _minor_of(parent_version)
    newest = _newest_for_minor(component, major, minor)
    if newest is None:
        raise ReleaseError(
            f"no known {component} release for {parent} {parent_version}; "
            f"known {component} versions: {', '.join(_known(component))}"
        )
    return newest


def ingress_version(ingress: str, serving_version: str) -> str:
    """The newest known patch of the ingress for the Serving minor."""
    if ingress not in INGRESS_FILES:
        raise ReleaseError(
            f"unknown ingress {ingress!r}; known: {', '.join(INGRESS_FILES)}"
        )
    return _companion_version(ingress, "serving", serving_version)


def source_version(source: str, eventing_version: str) -> str:
    """The newest known patch of an eventing source for the Eventing minor."""
    if source not in SOURCE_FILES:
        raise ReleaseError(f"unknown eventing source {source!r}; known: {', '.join(SOURCE_FILES)}")
    return _companion_version(source, "eventing", eventing_version)


def _download_url(base: str, repo: str, version: str, file: str) -> str:
    return f"{base.rstrip('/')}/{repo}/releases/download/knative-v{version}/{file}"


def release_urls(
    base: str,
    component: Component,
    version: str,
    ingress: str | None = "kourier",
) -> list[str]:
    """The release files of one component in apply order (ingress only for Serving)."""
    base = (base or DEFAULT_BASE).rstrip("/")
    version = resolve_version(component, version)
    if component == "serving":
        urls = [_download_url(base, "knative/serving", version, f) for f in SERVING_FILES]
        if ingress is not None:
            iv = ingress_version(ingress, version)
            repo, file = INGRESS_FILES[ingress]
            urls.append(_download_url(base, f"knative-extensions/{repo}", iv, file))
        urls += [_download_url(base, "knative/serving", version, f) for f in SERVING_POST_INSTALL]
        return urls
    if component == "eventing":
        return [_download_url(base, "knative/eventing", version, f) for f in EVENTING_FILES]
    raise ReleaseError(f"unknown component {component!r}; expected 'serving' or 'eventing'")


def source_urls(base: str, source: str, eventing_version: str) -> list[str]:
    """The files of one eventing source (e.g. kafka) matching the Eventing minor."""
    base = (base or DEFAULT_BASE).rstrip("/")
    sv = source_version(source, eventing_version)
    repo, files = SOURCE_FILES[source]
    return [_download_url(base, f"knative-extensions/{repo}", sv, f) for f in files]


def _hint(url: str) -> str:
    return (
        f"Check `knative-fleet:releaseBase` (the release mirror; {url} must exist there) "
        "and the requested version"
    )


def _local_path(parsed: urllib.parse.ParseResult) -> str:
    # file:///abs/path and file://localhost/abs/path are absolute; file://dir/x.yaml
    # is read relative to the working directory (the Pulumi project), for mirrors
    # configured as e.g. file://../shared/knative-releases.
    path = urllib.request.url2pathname(parsed.path)
    if parsed.netloc in ("", "localhost"):
        return path
    return urllib.request.url2pathname(parsed.netloc) + path


def _read(url: str) -> bytes:
    parsed = urllib.parse.urlparse(url)
    try:
        if parsed.scheme == "file":
            with open(_local_path(parsed), "rb") as fh:
                return fh.read()
        if parsed.scheme in ("http", "https"):
            with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_SECONDS) as resp:
                return resp.read()
    except urllib.error.HTTPError as exc:
        raise ReleaseError(
            f"cannot fetch Knative release file {url}: HTTP {exc.code} {exc.reason}. "
            f"{_hint(url)}"
        ) from exc
    except urllib.error.URLError as exc:
        raise ReleaseError(
            f"cannot fetch Knative release file {url}: {exc.reason}. {_hint(url)}"
        ) from exc
    except (OSError, ValueError) as exc:  # missing file, timeout, bad URL
        raise ReleaseError(
            f"cannot read Knative release file {url}: {exc}. {_hint(url)}"
        ) from exc
    raise ReleaseError(
        f"unsupported release URL {url!r}: use https://, http:// or file:// "
        "for `knative-fleet:releaseBase`"
    )


def _flatten(doc: object, url: str, index: int) -> list[dict]:
    if not isinstance(doc, dict) or not doc.get("kind") or not doc.get("apiVersion"):
        raise ReleaseError(
            f"Knative release file {url}: document {index} is not a Kubernetes object "
            f"(no apiVersion/kind). {_hint(url)}"
        )
    if doc["kind"].endswith("List") and isinstance(doc.get("items"), list):
        return [obj for item in doc["items"] for obj in _flatten(item, url, index)]
    return [doc]


@functools.lru_cache(maxsize=256)
def load_documents(url: str) -> tuple[dict, ...]:
    """The Kubernetes objects of one release file, read and parsed once per URL.

    The result is shared by every caller: never mutate it, copy first (render()
    does). Failures are not cached, so a transient error is retried next time.
    """
    raw = _read(url)
    try:
        try:
            docs = list(yaml.load_all(raw, Loader=_Loader))
        except yaml.composer.ComposerError as exc:
            if "duplicate anchor" not in str(exc):
                raise
            docs = list(yaml.load_all(raw, Loader=_RedefinableAnchorLoader))
    except yaml.YAMLError as exc:
        raise ReleaseError(
            f"Knative release file {url} is not valid YAML: {exc}. {_hint(url)}"
        ) from exc
    objects: list[dict] = []
    for index, doc in enumerate(docs):
        if doc is not None:
            objects.extend(_flatten(doc, url, index))
    return tuple(objects)

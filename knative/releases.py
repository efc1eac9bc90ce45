"""Which upstream files make a Knative release, and reading them once.

A fleet of a hundred spokes on the same version must fetch and parse each release
file once, and a version the user did not mean must never be installed: "1.23"
means the newest patch known here, anything unparsable or unknown is an error.

Versions: "x.y" resolves against KNOWN_VERSIONS; "x.y.z" is installed exactly, also when
the table does not list it, as long as its release files are at the release base (a
version that is not there is a ReleaseError naming the URL or path tried).

Companions (Serving's ingress, Eventing's sources) are released per minor with their own
patch numbers. Each takes the newest patch of its parent's major.minor: the newest
KNOWN_VERSIONS lists, or, for a minor the table does not list, the newest at the release
base (a file:// base is listed; an http(s) base is probed x.y.0, x.y.1, ... until
MISSES_IN_A_ROW in a row are missing). This is the operator's rule too: it bundles one
ingress and one source release per minor in kodata and picks them by the Serving or
Eventing minor (pkg/reconciler/common/releases.go, knativeserving/ingress,
knativeeventing/source). A spec that needs other files names them all in `manifests`.
"""

from __future__ import annotations

import functools
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPMessage
from typing import IO, Literal

import yaml

from core.errors import ReleaseError
from knative import parsed_cache

DEFAULT_BASE = "https://github.com"
FETCH_TIMEOUT_SECONDS = 60
# Probing an http(s) base for a companion's newest patch stops after this many missing
# patch numbers in a row (mirrors may skip a patch; Knative has never skipped two).
MISSES_IN_A_ROW = 3
MAX_PATCH = 99

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


def _companion_version(component: str, parent: str, parent_version: str, base: str | None,
                       repo: str, file: str) -> str:
    """Newest patch of an ingress/source for the parent's minor: they are released in
    lockstep per minor, but their patch numbers differ. The table's, else (with a base)
    the newest at the base."""
    _known(component)
    major, minor = _minor_of(parent_version)
    newest = _newest_for_minor(component, major, minor)
    if newest is not None:
        return newest
    if base is None:
        raise ReleaseError(
            f"no known {component} release for {parent} {parent_version}; "
            f"known {component} versions: {', '.join(_known(component))}"
        )
    return _newest_at_base(base.rstrip("/"), repo, file, major, minor,
                           f"{component} release for {parent} {parent_version}")


def ingress_version(ingress: str, serving_version: str, base: str | None = None) -> str:
    """The newest patch of the ingress for the Serving minor (known, else at `base`)."""
    if ingress not in INGRESS_FILES:
        raise ReleaseError(
            f"unknown ingress {ingress!r}; known: {', '.join(INGRESS_FILES)}"
        )
    repo, file = INGRESS_FILES[ingress]
    return _companion_version(ingress, "serving", serving_version, base,
                              f"knative-extensions/{repo}", file)


def source_version(source: str, eventing_version: str, base: str | None = None) -> str:
    """The newest patch of an eventing source for the Eventing minor (known, else at
    `base`)."""
    if source not in SOURCE_FILES:
        raise ReleaseError(f"unknown eventing source {source!r}; known: {', '.join(SOURCE_FILES)}")
    repo, files = SOURCE_FILES[source]
    return _companion_version(source, "eventing", eventing_version, base,
                              f"knative-extensions/{repo}", files[0])


def _download_url(base: str, repo: str, version: str, file: str) -> str:
    return f"{base.rstrip('/')}/{repo}/releases/download/knative-v{version}/{file}"


def _downloads_dir(base: str, repo: str) -> str | None:
    """The local directory holding a repo's `knative-v*` release dirs, for a file:// base;
    None for any other base."""
    parsed = urllib.parse.urlparse(f"{base.rstrip('/')}/{repo}/releases/download")
    return _local_path(parsed) if parsed.scheme == "file" else None


def _versions_in(directory: str, file: str) -> list[str]:
    """The versions of a local downloads directory whose release dir holds `file`,
    oldest first."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = [name.removeprefix("knative-v") for name in names
             if name.startswith("knative-v") and _PATCH.fullmatch(name.removeprefix("knative-v"))
             and os.path.isfile(os.path.join(directory, name, file))]
    return sorted(found, key=_patch_key)


class _KeepHeadOnRedirect(urllib.request.HTTPRedirectHandler):
    """GitHub answers a release download with a redirect; urllib would follow a HEAD
    with a GET, i.e. download the file just to learn that it exists."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int,
                         msg: str, headers: HTTPMessage,
                         newurl: str) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and req.get_method() == "HEAD":
            new.method = "HEAD"
        return new


_HEAD_OPENER = urllib.request.build_opener(_KeepHeadOnRedirect)


def _exists(url: str) -> bool:
    """Whether a release file is at `url`: a file:// path is a file, an http(s) HEAD
    answers 2xx. 404 and 410 mean no; any other failure is a ReleaseError, since "not
    there" must not be guessed from an outage."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        return os.path.isfile(_local_path(parsed))
    if parsed.scheme not in ("http", "https"):
        raise ReleaseError(
            f"unsupported release URL {url!r}: use https://, http:// or file:// "
            "for `knative-fleet:releaseBase`"
        )
    try:
        with _HEAD_OPENER.open(urllib.request.Request(url, method="HEAD"),
                               timeout=FETCH_TIMEOUT_SECONDS):
            return True
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return False
        raise ReleaseError(
            f"cannot check Knative release file {url}: HTTP {exc.code} {exc.reason}. "
            f"{_hint(url)}"
        ) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ReleaseError(
            f"cannot check Knative release file {url}: {reason}. {_hint(url)}"
        ) from exc


@functools.lru_cache(maxsize=256)
def _newest_at_base(base: str, repo: str, file: str, major: int, minor: int,
                    what: str) -> str:
    """The newest x.y.z of `repo` for major.minor whose `file` is at the base, found
    once per run (failures are not cached). ReleaseError naming what was tried if none."""
    directory = _downloads_dir(base, repo)
    if directory is not None:
        present = _versions_in(directory, file)
        matching = [v for v in present if _patch_key(v)[:2] == (major, minor)]
        if matching:
            return matching[-1]
        raise ReleaseError(
            f"no {what} at the release base: {directory} has no knative-v{major}.{minor}.*/"
            f"{file} (it has: {', '.join(present) or 'no releases'}). Check "
            f"`knative-fleet:releaseBase` and the requested version, or name the files in "
            f"the spec's `manifests`"
        )
    newest: str | None = None
    tried: list[str] = []
    misses = 0
    for patch in range(MAX_PATCH + 1):
        version = f"{major}.{minor}.{patch}"
        url = _download_url(base, repo, version, file)
        if _exists(url):
            newest, misses = version, 0
            continue
        tried.append(url)
        misses += 1
        if misses >= MISSES_IN_A_ROW:
            break
    if newest is not None:
        return newest
    raise ReleaseError(
        f"no {what} at the release base; tried {', '.join(tried)}. "
        f"Check `knative-fleet:releaseBase` and the requested version, or name the files "
        f"in the spec's `manifests`"
    )


def _require_release(base: str, component: Component, version: str, file: str) -> None:
    """A version the tables do not list must be at the base: say so, naming the URL or
    path tried (and, for a file:// base, the versions it has), before anything else
    about it is looked up."""
    repo = f"knative/{component}"
    url = _download_url(base, repo, version, file)
    if _exists(url):
        return
    directory = _downloads_dir(base, repo)
    have = (f" (it has: {', '.join(_versions_in(directory, file)) or 'no releases'})"
            if directory is not None else "")
    raise ReleaseError(
        f"no {component} {version} release at the release base: {url} does not exist"
        f"{have}. Check `knative-fleet:releaseBase` (the release mirror) and the requested "
        f"version"
    )


def release_urls(
    base: str,
    component: Component,
    version: str,
    ingress: str | None = "kourier",
) -> list[str]:
    """The release files of one component in apply order (ingress only for Serving)."""
    base = (base or DEFAULT_BASE).rstrip("/")
    version = resolve_version(component, version)
    files = {"serving": SERVING_FILES, "eventing": EVENTING_FILES}.get(component)
    if files is None:
        raise ReleaseError(f"unknown component {component!r}; expected 'serving' or 'eventing'")
    if version not in _known(component):
        _require_release(base, component, version, files[0])
    urls = [_download_url(base, f"knative/{component}", version, f) for f in files]
    if component == "serving":
        if ingress is not None:
            iv = ingress_version(ingress, version, base)
            repo, file = INGRESS_FILES[ingress]
            urls.append(_download_url(base, f"knative-extensions/{repo}", iv, file))
        urls += [_download_url(base, "knative/serving", version, f) for f in SERVING_POST_INSTALL]
    return urls


def source_urls(base: str, source: str, eventing_version: str) -> list[str]:
    """The files of one eventing source (e.g. kafka) matching the Eventing minor."""
    base = (base or DEFAULT_BASE).rstrip("/")
    sv = source_version(source, eventing_version, base)
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


def _parse_yaml(raw: bytes) -> list:
    try:
        return list(yaml.load_all(raw, Loader=_Loader))
    except yaml.composer.ComposerError as exc:
        if "duplicate anchor" not in str(exc):
            raise
        return list(yaml.load_all(raw, Loader=_RedefinableAnchorLoader))


@functools.lru_cache(maxsize=256)
def load_documents(url: str) -> tuple[dict, ...]:
    """The Kubernetes objects of one release file, read and parsed once per URL.

    The result is shared by every caller: never mutate it, copy first (render()
    does). Failures are not cached, so a transient error is retried next time.
    """
    raw = _read(url)
    try:
        docs = parsed_cache.parsed(raw, _parse_yaml)
    except yaml.YAMLError as exc:
        raise ReleaseError(
            f"Knative release file {url} is not valid YAML: {exc}. {_hint(url)}"
        ) from exc
    objects: list[dict] = []
    for index, doc in enumerate(docs):
        if doc is not None:
            objects.extend(_flatten(doc, url, index))
    return tuple(objects)

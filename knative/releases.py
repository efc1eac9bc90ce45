"""The catalogue of Knative releases: which versions exist and which files make each
release and its companions, as URLs at the release base.

A version the user did not mean must never be installed: "1.23" means the newest patch
known here, anything unparsable or unknown is an error.

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

Reading the files, and asking the base whether it has one, is knative.release_fetch's job.
"""

from __future__ import annotations

import functools
import re

from core.errors import ReleaseError
from core.names import Component
from knative.release_fetch import (
    DEFAULT_BASE,
    download_url,
    local_releases_dir,
    release_file_exists,
    versions_holding,
)

# Probing an http(s) base for a companion's newest patch stops after this many missing
# patch numbers in a row (mirrors may skip a patch; Knative has never skipped two).
MISSES_IN_A_ROW = 3
MAX_PATCH = 99

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


def _versions_at(directory: str, file: str) -> list[str]:
    """The x.y.z versions of a local releases directory that hold `file`, oldest first."""
    return sorted((v for v in versions_holding(directory, file)
                   if _PATCH.fullmatch(v)), key=_patch_key)


@functools.lru_cache(maxsize=256)
def _newest_at_base(base: str, repo: str, file: str, major: int, minor: int,
                    what: str) -> str:
    """The newest x.y.z of `repo` for major.minor whose `file` is at the base, found
    once per run (failures are not cached). ReleaseError naming what was tried if none."""
    directory = local_releases_dir(base, repo)
    if directory is not None:
        present = _versions_at(directory, file)
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
        url = download_url(base, repo, version, file)
        if release_file_exists(url):
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
    url = download_url(base, repo, version, file)
    if release_file_exists(url):
        return
    directory = local_releases_dir(base, repo)
    have = (f" (it has: {', '.join(_versions_at(directory, file)) or 'no releases'})"
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
    urls = [download_url(base, f"knative/{component}", version, f) for f in files]
    if component == "serving":
        if ingress is not None:
            iv = ingress_version(ingress, version, base)
            repo, file = INGRESS_FILES[ingress]
            urls.append(download_url(base, f"knative-extensions/{repo}", iv, file))
        urls += [download_url(base, "knative/serving", version, f) for f in SERVING_POST_INSTALL]
    return urls


def source_urls(base: str, source: str, eventing_version: str) -> list[str]:
    """The files of one eventing source (e.g. kafka) matching the Eventing minor."""
    base = (base or DEFAULT_BASE).rstrip("/")
    sv = source_version(source, eventing_version, base)
    repo, files = SOURCE_FILES[source]
    return [download_url(base, f"knative-extensions/{repo}", sv, f) for f in files]

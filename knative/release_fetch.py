"""Reading Knative release files from the release base, each once per run.

A fleet of a hundred spokes on one version must fetch and parse each release file once:
load_documents reads a file once per URL (and knative.parsed_cache keeps its parse on
disk across runs). The release base is GitHub or a mirror with its layout
(`<base>/<repo>/releases/download/knative-v<version>/<file>`), over https://, http://
or file://; failures are ReleaseErrors naming the URL and `knative-fleet:releaseBase`,
and "not there" is never guessed from an outage. Which versions and files make a release
is knative.releases' question; this module answers whether a file is at the base, which
release directories a file:// base has, and what a file holds.
"""

from __future__ import annotations

import functools
import os
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPMessage
from typing import IO

import yaml

from core.errors import ReleaseError
from knative import parsed_cache

DEFAULT_BASE = "https://github.com"
FETCH_TIMEOUT_SECONDS = 60
# A release's directory under `<base>/<repo>/releases/download/`: this prefix, then x.y.z.
RELEASE_DIR_PREFIX = "knative-v"

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


def download_url(base: str, repo: str, version: str, file: str) -> str:
    """Where `file` of `repo`'s release `version` is at the base."""
    return f"{base.rstrip('/')}/{repo}/releases/download/{RELEASE_DIR_PREFIX}{version}/{file}"


def local_releases_dir(base: str, repo: str) -> str | None:
    """The local directory holding a repo's release dirs, for a file:// base; None for
    any other base."""
    parsed = urllib.parse.urlparse(f"{base.rstrip('/')}/{repo}/releases/download")
    return _local_path(parsed) if parsed.scheme == "file" else None


def versions_holding(directory: str, file: str) -> list[str]:
    """The versions (as their directories spell them) of a local releases directory whose
    release dir holds `file`; none when the directory cannot be read."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(name.removeprefix(RELEASE_DIR_PREFIX) for name in names
                  if name.startswith(RELEASE_DIR_PREFIX)
                  and os.path.isfile(os.path.join(directory, name, file)))


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


def release_file_exists(url: str) -> bool:
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

"""Versions the built-in tables do not list: installable by their exact version when the
release base has them, companions (ingress, sources) the newest patch of the same minor
found there, anything else a ReleaseError (ManifestsUnavailable) naming what was tried."""

from __future__ import annotations

import functools
import http.server
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import ReleaseError
from knative import release_fetch, releases
from knative.plan import plan_spoke
from models.component import EventingSpec, ServingSpec
from tests.support.http_server import serve
from tests.support.releases import copy_release

SERVING_REPO = "knative/serving"
EVENTING_REPO = "knative/eventing"
KOURIER_REPO = "knative-extensions/net-kourier"
GITHUB_REPO = "knative-extensions/eventing-github"


@pytest.fixture
def base_dir(tmp_path: Path) -> Path:
    """A release base with Serving 1.21.1 and Eventing 1.21.0, which the tables do not
    list; net-kourier 1.21.0 and 1.21.3 (a gap between) and 1.22.1; eventing-github 1.21.0
    and 1.21.2."""
    root = tmp_path / "releases"
    copy_release(root, SERVING_REPO, "1.21.1")
    copy_release(root, EVENTING_REPO, "1.21.0")
    for version in ("1.21.0", "1.21.3", "1.22.1"):
        copy_release(root, KOURIER_REPO, version)
    for version in ("1.21.0", "1.21.2"):
        copy_release(root, GITHUB_REPO, version)
    return root


@pytest.fixture
def http_base(base_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """base_dir served over HTTP."""
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    with serve(functools.partial(Quiet, directory=str(base_dir))) as url:
        yield url


def kourier_url(base: str, version: str) -> str:
    return f"{base}/{KOURIER_REPO}/releases/download/knative-v{version}/kourier.yaml"


def test_the_tables_do_not_list_these_versions() -> None:
    assert "1.21.1" not in releases.KNOWN_VERSIONS["serving"]
    assert "1.21.0" not in releases.KNOWN_VERSIONS["eventing"]
    assert not any(v.startswith("1.21.") for v in releases.KNOWN_VERSIONS["kourier"])


def test_serving_of_an_unlisted_version_takes_the_newest_kourier_patch_of_its_minor(
        base_dir: Path) -> None:
    base = base_dir.as_uri()
    urls = releases.release_urls(base, "serving", "1.21.1")
    assert urls[0] == f"{base}/{SERVING_REPO}/releases/download/knative-v1.21.1/serving-crds.yaml"
    assert urls[3] == kourier_url(base, "1.21.3")  # not 1.21.0, not 1.22.1
    assert all(Path(u.removeprefix("file://")).is_file() for u in urls)


def test_eventing_sources_of_an_unlisted_version(base_dir: Path) -> None:
    base = base_dir.as_uri()
    assert releases.release_urls(base, "eventing", "1.21.0")[0].endswith(
        "/knative/eventing/releases/download/knative-v1.21.0/eventing-crds.yaml")
    assert releases.source_urls(base, "github", "1.21.0") == [
        f"{base}/{GITHUB_REPO}/releases/download/knative-v1.21.2/github.yaml"]


def test_an_unlisted_version_plans_end_to_end(base_dir: Path) -> None:
    serving = ServingSpec.model_validate({"version": "1.21.1"})
    eventing = EventingSpec.model_validate({"version": "1.21.0",
                                            "source": {"github": {}}})
    plans = plan_spoke(serving, eventing, base_dir.as_uri(), {})
    assert [(p.component, p.version) for p in plans] == [("serving", "1.21.1"),
                                                         ("eventing", "1.21.0")]
    names = {o["metadata"]["name"] for o in plans[0].rendered.namespaced}
    assert {"controller", "net-kourier-controller"} <= names
    assert "github-webhook" in {o["metadata"]["name"] for o in plans[1].rendered.namespaced}


def test_a_version_missing_at_the_base_names_the_path_tried(base_dir: Path) -> None:
    with pytest.raises(ReleaseError) as err:
        releases.release_urls(base_dir.as_uri(), "serving", "1.21.2")
    message = str(err.value)
    tried = (f"{base_dir.as_uri()}/{SERVING_REPO}/releases/download/knative-v1.21.2/"
             f"serving-crds.yaml")
    assert f"no serving 1.21.2 release at the release base: {tried} does not exist" in message
    assert "(it has: 1.21.1)" in message and "knative-fleet:releaseBase" in message


def test_a_missing_companion_names_the_directory_and_what_it_has(base_dir: Path) -> None:
    for version in ("1.21.0", "1.21.3"):
        shutil.rmtree(base_dir / KOURIER_REPO / "releases/download" / f"knative-v{version}")
    with pytest.raises(ReleaseError) as err:
        releases.release_urls(base_dir.as_uri(), "serving", "1.21.1")
    message = str(err.value)
    assert "no kourier release for serving 1.21.1 at the release base" in message
    assert str(base_dir / KOURIER_REPO / "releases/download") in message
    assert "knative-v1.21.*/kourier.yaml (it has: 1.22.1)" in message
    assert "`manifests`" in message
    with pytest.raises(ReleaseError, match="no github release for eventing 1.21.0"):
        releases.source_urls((base_dir / "nowhere").as_uri(), "github", "1.21.0")


def test_listed_versions_need_no_lookup_at_the_base(tmp_path: Path) -> None:
    # Known versions and companions come from the tables: an empty base is only found
    # wanting when the files are read.
    base = tmp_path.as_uri()
    assert releases.release_urls(base, "serving", "1.23")[3] == kourier_url(base, "1.23.0")


def test_http_base_probes_patches_past_a_gap(http_base: str) -> None:
    urls = releases.release_urls(http_base, "serving", "1.21.1")
    assert urls[3] == kourier_url(http_base, "1.21.3")
    assert releases.source_urls(http_base, "github", "1.21.0")[0].endswith(
        "/knative-v1.21.2/github.yaml")
    assert release_fetch.load_documents(urls[3])


def test_http_base_missing_version_and_companion_name_the_urls_tried(
        http_base: str, base_dir: Path) -> None:
    with pytest.raises(ReleaseError) as err:
        releases.release_urls(http_base, "eventing", "1.21.9")
    assert (f"{http_base}/{EVENTING_REPO}/releases/download/knative-v1.21.9/eventing-crds.yaml"
            f" does not exist") in str(err.value)
    shutil.rmtree(base_dir / GITHUB_REPO)
    with pytest.raises(ReleaseError) as err:
        releases.source_urls(http_base, "github", "1.21.0")
    message = str(err.value)
    assert "no github release for eventing 1.21.0 at the release base; tried " in message
    for patch in range(releases.MISSES_IN_A_ROW):
        assert f"knative-v1.21.{patch}/github.yaml" in message
    assert f"knative-v1.21.{releases.MISSES_IN_A_ROW}/" not in message


def test_an_unreachable_base_is_not_taken_for_a_missing_release(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)

    class Broken(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(503)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with serve(Broken) as url, pytest.raises(ReleaseError, match="HTTP 503"):
        releases.release_urls(url, "serving", "1.21.1")

"""The release catalogue: version resolution and each release's files, against the offline
mirror of the real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ReleaseError
from knative import release_fetch, releases
from lab.paths import RELEASES

MIRROR = RELEASES
BASE = MIRROR.as_uri()


def _path(url: str) -> Path:
    assert url.startswith(BASE + "/"), url
    return MIRROR / url[len(BASE) + 1:]


def test_mirror_is_present() -> None:
    core = MIRROR / "knative/serving/releases/download/knative-v1.23.0/serving-core.yaml"
    assert core.is_file()


@pytest.mark.parametrize(
    ("component", "requested", "expected"),
    [
        ("serving", "1.23", "1.23.0"),
        ("serving", "1.22", "1.22.1"),
        ("eventing", "1.22", "1.22.2"),
        ("eventing", "1.23", "1.23.0"),
        ("serving", "1.23.0", "1.23.0"),
        ("eventing", "1.22.2", "1.22.2"),
        ("serving", "1.21.7", "1.21.7"),  # exact: allowed, the fetch tells
        ("kourier", "1.22", "1.22.1"),
        ("contour", "1.22", "1.22.2"),
        ("kafka", "1.23", "1.23.0"),
    ],
)
def test_resolve_version(component: str, requested: str, expected: str) -> None:
    assert releases.resolve_version(component, requested) == expected


@pytest.mark.parametrize("bad", ["", "latest", "v1.23", "1", "1.23.0.1", "1.x", "1.23-rc1", "a.b"])
def test_resolve_version_rejects_bad_strings(bad: str) -> None:
    with pytest.raises(ReleaseError) as err:
        releases.resolve_version("serving", bad)
    message = str(err.value)
    assert repr(bad) in message
    assert "1.22.1" in message and "1.23.0" in message


def test_resolve_version_unknown_minor_names_request_and_known_versions() -> None:
    with pytest.raises(ReleaseError) as err:
        releases.resolve_version("eventing", "1.21")
    message = str(err.value)
    assert "'1.21'" in message
    assert "1.22.2, 1.23.0" in message


def test_release_error_is_a_value_error() -> None:
    assert issubclass(ReleaseError, ValueError)


def test_resolve_version_unknown_component() -> None:
    with pytest.raises(ReleaseError, match="unknown Knative component 'functions'"):
        releases.resolve_version("functions", "1.23")


@pytest.mark.parametrize(
    ("ingress", "serving", "expected"),
    [
        ("kourier", "1.23.0", "1.23.0"),
        ("kourier", "1.22.1", "1.22.1"),
        ("istio", "1.22", "1.22.1"),
        ("gateway-api", "1.23", "1.23.0"),
        ("contour", "1.22.1", "1.22.2"),  # contour's 1.22 patch differs from Serving's
        ("contour", "1.22.0", "1.22.2"),
    ],
)
def test_ingress_version(ingress: str, serving: str, expected: str) -> None:
    assert releases.ingress_version(ingress, serving) == expected


def test_ingress_version_errors() -> None:
    with pytest.raises(ReleaseError, match="unknown ingress 'nginx'"):
        releases.ingress_version("nginx", "1.23.0")
    with pytest.raises(ReleaseError, match="no known kourier release for serving 1.21.0"):
        releases.ingress_version("kourier", "1.21.0")


def _serving(version: str, ingress_repo: str, ingress_version: str, ingress_file: str) -> list:
    core = f"{BASE}/knative/serving/releases/download/knative-v{version}"
    return [
        f"{core}/serving-crds.yaml",
        f"{core}/serving-core.yaml",
        f"{core}/serving-hpa.yaml",
        f"{BASE}/knative-extensions/{ingress_repo}/releases/download/"
        f"knative-v{ingress_version}/{ingress_file}",
        f"{core}/serving-post-install-jobs.yaml",
    ]


@pytest.mark.parametrize(
    ("ingress", "repo", "file"),
    [
        ("kourier", "net-kourier", "kourier.yaml"),
        ("istio", "net-istio", "net-istio.yaml"),
        ("gateway-api", "net-gateway-api", "net-gateway-api.yaml"),
        ("contour", "net-contour", "net-contour.yaml"),
    ],
)
def test_serving_urls_per_ingress(ingress: str, repo: str, file: str) -> None:
    urls = releases.release_urls(BASE + "/", "serving", "1.23", ingress=ingress)
    assert urls == _serving("1.23.0", repo, "1.23.0", file)
    assert all(_path(u).is_file() for u in urls)


def test_serving_urls_use_the_ingress_patch_of_the_serving_minor() -> None:
    urls = releases.release_urls(BASE, "serving", "1.22", ingress="contour")
    assert urls == _serving("1.22.1", "net-contour", "1.22.2", "net-contour.yaml")
    assert all(_path(u).is_file() for u in urls)


def test_serving_urls_default_to_kourier_and_allow_no_ingress() -> None:
    assert "net-kourier" in releases.release_urls(BASE, "serving", "1.23.0")[3]
    urls = releases.release_urls(BASE, "serving", "1.23.0", ingress=None)
    assert [u.rsplit("/", 1)[1] for u in urls] == [
        "serving-crds.yaml", "serving-core.yaml", "serving-hpa.yaml",
        "serving-post-install-jobs.yaml",
    ]


def test_eventing_urls_exclude_tls_networking() -> None:
    for version in ("1.22", "1.23"):
        urls = releases.release_urls(BASE, "eventing", version, ingress="kourier")
        assert [u.rsplit("/", 1)[1] for u in urls] == [
            "eventing-crds.yaml", "eventing-core.yaml", "in-memory-channel.yaml",
            "mt-channel-broker.yaml", "eventing-post-install.yaml",
        ]
        assert all(_path(u).is_file() for u in urls)
        assert not any("tls-networking" in u for u in urls)


def test_default_base_is_github() -> None:
    assert release_fetch.DEFAULT_BASE == "https://github.com"
    assert releases.release_urls("", "eventing", "1.23.0")[0] == (
        "https://github.com/knative/eventing/releases/download/knative-v1.23.0/eventing-crds.yaml"
    )


def test_release_urls_reject_bad_version_and_ingress() -> None:
    with pytest.raises(ReleaseError):
        releases.release_urls(BASE, "serving", "1.20")
    with pytest.raises(ReleaseError, match="unknown ingress"):
        releases.release_urls(BASE, "serving", "1.23", ingress="traefik")


@pytest.mark.parametrize("source", sorted(releases.SOURCE_FILES))
def test_source_urls_exist_and_load(source: str) -> None:
    urls = releases.source_urls(BASE, source, "1.23")
    assert urls
    for url in urls:
        assert _path(url).is_file()
        assert release_fetch.load_documents(url)  # github.yaml redefines a YAML anchor

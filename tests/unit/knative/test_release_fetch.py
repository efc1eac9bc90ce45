"""Reading release files: parsed once per URL, over file:// and http(s), and every failure
a ReleaseError that names the URL and the fix."""

from __future__ import annotations

import functools
import http.server
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import ReleaseError
from knative import release_fetch
from lab.paths import RELEASES
from tests.support.http_server import serve

BASE = RELEASES.as_uri()


def test_load_documents_parses_the_real_files() -> None:
    base = f"{BASE}/knative/serving/releases/download/knative-v1.23.0"
    crds = release_fetch.load_documents(f"{base}/serving-crds.yaml")
    assert isinstance(crds, tuple) and len(crds) == 12
    assert {d["kind"] for d in crds} == {"CustomResourceDefinition"}
    core = release_fetch.load_documents(f"{base}/serving-core.yaml")
    assert all(isinstance(d, dict) and d.get("kind") for d in core)


def test_load_documents_drops_empty_docs_and_flattens_lists(tmp_path: Path) -> None:
    file = tmp_path / "list.yaml"
    file.write_text(
        "---\n# only a comment\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
        "---\n"
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n"
        "- {apiVersion: v1, kind: ConfigMapList, items: "
        "[{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}]}\n"
        "---\n"
    )
    docs = release_fetch.load_documents(file.as_uri())
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("ConfigMap", "a"), ("Secret", "b"), ("ConfigMap", "c"),
    ]


def test_load_documents_is_cached_per_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "one.yaml"
    file.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    reads: list[str] = []
    real_read = release_fetch._read

    def counting_read(url: str) -> bytes:
        reads.append(url)
        return real_read(url)

    monkeypatch.setattr(release_fetch, "_read", counting_read)
    release_fetch.load_documents.cache_clear()
    first = release_fetch.load_documents(file.as_uri())
    second = release_fetch.load_documents(file.as_uri())
    assert first is second
    assert reads == [file.as_uri()]


def test_failures_are_not_cached(tmp_path: Path) -> None:
    file = tmp_path / "late.yaml"
    with pytest.raises(ReleaseError):
        release_fetch.load_documents(file.as_uri())
    file.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    assert len(release_fetch.load_documents(file.as_uri())) == 1


def test_missing_file_error_names_url_cause_and_fix() -> None:
    url = f"{BASE}/knative/serving/releases/download/knative-v1.99.0/serving-core.yaml"
    with pytest.raises(ReleaseError) as err:
        release_fetch.load_documents(url)
    message = str(err.value)
    assert url in message
    assert "No such file" in message
    assert "knative-fleet:releaseBase" in message and "version" in message


def test_bad_yaml_and_non_objects_are_release_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: [unclosed\n")
    with pytest.raises(ReleaseError, match="not valid YAML") as err:
        release_fetch.load_documents(bad.as_uri())
    assert "knative-fleet:releaseBase" in str(err.value)
    html = tmp_path / "login.html"
    html.write_text("<html>sign in</html>\n")
    with pytest.raises(ReleaseError, match="not a Kubernetes object"):
        release_fetch.load_documents(html.as_uri())


def test_relative_file_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "x.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")
    monkeypatch.chdir(tmp_path)
    assert release_fetch.load_documents("file://mirror/x.yaml")[0]["kind"] == "Secret"


def test_unsupported_scheme() -> None:
    with pytest.raises(ReleaseError, match="unsupported release URL"):
        release_fetch.load_documents("ftp://example.invalid/serving-core.yaml")


@pytest.fixture
def http_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    with serve(functools.partial(Quiet, directory=str(tmp_path))) as url:
        yield url


def test_http_fetch_and_404(http_mirror: str) -> None:
    assert release_fetch.load_documents(f"{http_mirror}/ok.yaml")[0]["metadata"]["name"] == "a"
    url = f"{http_mirror}/knative/serving/releases/download/knative-v1.23.0/serving-core.yaml"
    with pytest.raises(ReleaseError) as err:
        release_fetch.load_documents(url)
    message = str(err.value)
    assert url in message and "HTTP 404" in message and "knative-fleet:releaseBase" in message


def test_redirects_keep_head(monkeypatch: pytest.MonkeyPatch) -> None:
    # GitHub redirects release downloads; the existence check must not download them.
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    seen: list[str] = []

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            seen.append("HEAD " + self.path)
            if self.path.startswith("/moved"):
                self.send_response(200)
            else:
                self.send_response(302)
                self.send_header("Location", "/moved" + self.path)
            self.end_headers()

        def do_GET(self) -> None:
            seen.append("GET " + self.path)
            self.send_response(500)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with serve(Redirect) as url:
        assert release_fetch.release_file_exists(f"{url}/a/b.yaml")
    assert seen == ["HEAD /a/b.yaml", "HEAD /moved/a/b.yaml"]


def test_a_file_base_lists_the_release_dirs_holding_a_file(tmp_path: Path) -> None:
    base = tmp_path.as_uri()
    assert release_fetch.download_url(base + "/", "knative/serving", "1.23.0",
                                      "serving-core.yaml") == (
        f"{base}/knative/serving/releases/download/knative-v1.23.0/serving-core.yaml")
    directory = release_fetch.local_releases_dir(base, "knative/serving")
    assert directory == str(tmp_path / "knative" / "serving" / "releases" / "download")
    for version, file in (("1.23.0", "serving-core.yaml"), ("1.22.1", "serving-crds.yaml")):
        (tmp_path / directory / f"knative-v{version}").mkdir(parents=True)
        (tmp_path / directory / f"knative-v{version}" / file).write_text("")
    assert release_fetch.versions_holding(directory, "serving-core.yaml") == ["1.23.0"]
    assert release_fetch.versions_holding(str(tmp_path / "nowhere"), "serving-core.yaml") == []
    assert release_fetch.local_releases_dir("https://github.com", "knative/serving") is None

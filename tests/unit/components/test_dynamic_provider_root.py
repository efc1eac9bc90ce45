"""A dynamic provider pickled by the package's component finds this repository's modules
from another project's directory (where the engine starts the dynamic provider); the
program's pickles are what they always were."""

from __future__ import annotations

import base64
import subprocess
import sys

import pytest
from pulumi.dynamic.dynamic import serialize_provider

from components import dynamic_provider
from components.membership import _Provider
from lab.paths import REPO

UNPICKLE = ("import base64, sys, dill; p = dill.loads(base64.b64decode(sys.argv[1])); "
            "print(type(p).__module__ + '.' + type(p).__name__)")


def unpickled_elsewhere(pickled: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", UNPICKLE, pickled], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_a_rooted_pickle_is_unpickled_from_another_directory(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(dynamic_provider, "_IMPORT_ROOT", None)
    plain = serialize_provider(_Provider())
    dynamic_provider.importable_from(REPO)
    rooted = serialize_provider(_Provider())
    assert rooted != plain
    got = unpickled_elsewhere(rooted, tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "components.membership._Provider"
    assert "No module named 'components'" in unpickled_elsewhere(plain, tmp_path).stderr


def test_the_programs_pickle_names_the_class_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamic_provider, "_IMPORT_ROOT", None)
    raw = base64.b64decode(serialize_provider(_Provider()))
    assert b"components.membership" in raw and b"site" not in raw

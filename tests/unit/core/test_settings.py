"""The one settings object: every KNATIVE_FLEET_* variable the Python side reads is a
field with a default; a value that is not allowed fails with the variable, the value
and the allowed values; the environment is read as it is when asked; docs/settings.md
has one row per variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import settings as settings_module
from core.errors import ConfigError
from core.settings import (
    BUILD_SH_VARIABLES,
    Settings,
    SettingsError,
    allowed,
    settings,
    variable,
)
from lab.paths import REPO

PYTHON_VARIABLES = {
    "KNATIVE_FLEET_PROFILE", "KNATIVE_FLEET_GC", "KNATIVE_FLEET_SDK_SPEEDUPS",
    "KNATIVE_FLEET_SDK_DEBUG", "KNATIVE_FLEET_SDK_OUTPUTS", "KNATIVE_FLEET_SDK_SERIALIZE",
    "KNATIVE_FLEET_SDK_STACK", "KNATIVE_FLEET_SDK_URN", "KNATIVE_FLEET_SDK_WAIT",
    "KNATIVE_FLEET_SDK_PICKLE",
    "KNATIVE_FLEET_CACHE", "KNATIVE_FLEET_LAB_DIR", "KNATIVE_FLEET_SHARED",
    "KNATIVE_FLEET_BINARIES", "KNATIVE_FLEET_APPROVE", "KNATIVE_FLEET_REVIEWED",
    "KNATIVE_FLEET_PLAN_OUT",
}


def test_every_variable_is_a_field_with_a_description() -> None:
    assert {variable(name) for name in Settings.model_fields} == PYTHON_VARIABLES
    assert all(field.description for field in Settings.model_fields.values())


def test_the_defaults() -> None:
    got = settings({})
    assert (got.profile, got.gc, got.sdk_speedups, got.sdk_debug) == (None, "program", "on",
                                                                      False)
    assert {got.sdk_outputs, got.sdk_serialize, got.sdk_stack, got.sdk_urn,
            got.sdk_wait, got.sdk_pickle} == {"program"}
    assert got.cache == Path.home() / ".cache" / "knative-fleet"
    assert (got.lab_dir, got.shared) == (None, None)


def test_values_are_read_and_typed(tmp_path: Path) -> None:
    got = settings({"KNATIVE_FLEET_PROFILE": str(tmp_path / "p.prof"),
                    "KNATIVE_FLEET_GC": "python", "KNATIVE_FLEET_SDK_DEBUG": "1",
                    "KNATIVE_FLEET_SDK_WAIT": "sdk", "KNATIVE_FLEET_CACHE": str(tmp_path),
                    "KNATIVE_FLEET_SDK_SPEEDUPS": "off"})
    assert got.profile == tmp_path / "p.prof"
    assert (got.gc, got.sdk_debug, got.sdk_wait, got.sdk_speedups) == ("python", True,
                                                                       "sdk", "off")
    assert got.cache == tmp_path


def test_an_empty_variable_is_an_unset_one() -> None:
    assert settings({"KNATIVE_FLEET_PROFILE": "", "KNATIVE_FLEET_GC": "",
                     "KNATIVE_FLEET_CACHE": ""}) == settings({})


def test_build_sh_and_unknown_variables_are_ignored() -> None:
    assert settings({"KNATIVE_FLEET_PULUMI_LOGS": "keep",
                     "KNATIVE_FLEET_NOT_A_SETTING": "x"}) == settings({})


@pytest.mark.parametrize(("var", "value", "allowed_values"), [
    ("KNATIVE_FLEET_GC", "banana", "'program', 'python'"),
    ("KNATIVE_FLEET_SDK_SPEEDUPS", "no", "'on', 'off'"),
    ("KNATIVE_FLEET_SDK_WAIT", "1", "'program', 'sdk'"),
    ("KNATIVE_FLEET_SDK_DEBUG", "maybe", "1, 0, true, false, yes, no, on, off"),
])
def test_a_bad_value_names_the_variable_the_value_and_the_allowed_ones(
        var: str, value: str, allowed_values: str) -> None:
    with pytest.raises(SettingsError) as raised:
        settings({var: value})
    message = str(raised.value)
    assert message.splitlines() == [message]
    assert f"{var}={value!r}" in message
    assert f"allowed: {allowed_values}" in message
    assert isinstance(raised.value, ConfigError)


def test_each_bad_value_is_one_line() -> None:
    with pytest.raises(SettingsError) as raised:
        settings({"KNATIVE_FLEET_GC": "banana", "KNATIVE_FLEET_SDK_URN": "fast"})
    assert sorted(line.split("=")[0] for line in str(raised.value).splitlines()) == [
        "KNATIVE_FLEET_GC", "KNATIVE_FLEET_SDK_URN"]


def test_the_process_environment_is_read_as_it_is_now(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KNATIVE_FLEET_GC", raising=False)
    first = settings()
    assert settings() is first  # built once while nothing changes
    monkeypatch.setenv("KNATIVE_FLEET_GC", "python")
    assert settings().gc == "python"
    monkeypatch.setenv("knative_fleet_gc", "banana")  # another variable: not ours
    assert settings().gc == "python"


def test_no_dotenv_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KNATIVE_FLEET_GC=python\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KNATIVE_FLEET_GC", raising=False)
    settings_module._built.cache_clear()
    assert settings().gc == "program"


def test_docs_have_one_row_per_variable() -> None:
    rows = [line for line in (REPO / "docs" / "settings.md").read_text().splitlines()
            if line.startswith("| `KNATIVE_FLEET_")]
    names = [row.split("`")[1] for row in rows]
    assert sorted(names) == sorted(PYTHON_VARIABLES | set(BUILD_SH_VARIABLES))
    for name in PYTHON_VARIABLES:
        field = name.removeprefix("KNATIVE_FLEET_").lower()
        if allowed(field) != "a path":
            row = next(r for r in rows if r.startswith(f"| `{name}`"))
            assert all(value.strip("'") in row for value in allowed(field).split(", ")), row

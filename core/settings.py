"""Every `KNATIVE_FLEET_*` variable the Python side reads, validated in one object.

Each setting is a field of `Settings` with its type, default and meaning (the table in
docs/settings.md), and is read through `settings()` only, so none is read twice in two
ways or mistyped where it is used. A value that is not allowed stops the run with one
line naming the variable, the value and what is allowed, instead of quietly meaning the
default. An empty variable is the same as an unset one.

`settings()` is built again only when a `KNATIVE_FLEET_*` variable (or HOME, which the
cache's default follows) changes: a caller may set one late, as the test workers do
with the lab directory. `toolchain/build.sh` reads two in bash (`BUILD_SH_VARIABLES`);
they are in the same table.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from core.errors import ConfigError

PREFIX = "KNATIVE_FLEET_"
# Read by toolchain/build.sh, not by Python (KNATIVE_FLEET_CACHE is read by both).
BUILD_SH_VARIABLES = ("KNATIVE_FLEET_CACHE", "KNATIVE_FLEET_PULUMI_LOGS")
BOOL_VALUES = "1, 0, true, false, yes, no, on, off"

# The program's own version of an SDK function, or the SDK's (docs/sdk-speedups.md).
SdkSwitch = Literal["program", "sdk"]
# The Pulumi CLI and Kubernetes provider the lab's stacks run on (docs/toolchain.md).
Binaries = Literal["patched", "released"]


def sdk_switch(with_sdk: str) -> Any:
    """A speed-up's own switch: the program's version by default; `with_sdk` says what
    `sdk` brings back, so every such switch is described the same way."""
    return Field(default="program", description=f"`sdk`: {with_sdk}")


class SettingsError(ConfigError):
    """A `KNATIVE_FLEET_*` variable has a value that is not allowed; one line each."""


class Settings(BaseSettings):
    """The run's `KNATIVE_FLEET_*` settings; the field `sdk_wait` is
    `KNATIVE_FLEET_SDK_WAIT`, and so on."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, case_sensitive=False, env_ignore_empty=True, frozen=True,
        extra="ignore")

    profile: Path | None = Field(
        default=None,
        description="Write a cProfile of the Python program to this file when it ends.")
    gc: Literal["program", "python"] = Field(
        default="program",
        description="`program`: a young collection every 100,000 allocations; "
                    "`python`: Python's own thresholds.")
    sdk_speedups: Literal["on", "off"] = Field(
        default="on",
        description="`off` keeps every one of the SDK's own functions the program "
                    "would replace; it wins over the per-speed-up switches.")
    sdk_debug: bool = Field(
        default=False,
        description="True sends the SDK's per-resource debug messages to the engine.")
    sdk_outputs: SdkSwitch = sdk_switch("every output of every resource is turned into Python.")
    sdk_serialize: SdkSwitch = sdk_switch("plain input values take the SDK's serializer walk.")
    sdk_stack: SdkSwitch = sdk_switch("each resource's stack trace is built by the SDK.")
    sdk_pickle: SdkSwitch = sdk_switch(
        "the SDK's pickler patches pile up, one per dynamic resource pickled.")
    sdk_urn: SdkSwitch = sdk_switch("every URN is computed through the SDK's Outputs.")
    sdk_wait: SdkSwitch = sdk_switch("the SDK's end-of-program wait for outputs.")
    cache: Path = Field(
        default_factory=lambda: Path.home() / ".cache" / "knative-fleet",
        description="Root of the on-disk caches (parsed release files; the toolchain).")
    lab_dir: Path | None = Field(
        default=None,
        description="The local lab's directory; unset: `.lab/` in the repository.")
    shared: Path | None = Field(
        default=None,
        description="The shared files (release mirror, CRDs); unset: `shared/` next to "
                    "the repository.")
    binaries: Binaries = Field(
        default="released",
        description="The Pulumi CLI and Kubernetes provider the lab's stacks run on: "
                    "`released`, exactly as released (what users run); `patched`, with "
                    "toolchain/patches/ (built with the tests' tools).")
    approve: str = Field(
        default="",
        description="Wave names, comma-separated: the waves with `approval: Required` "
                    "this run may start.")

    reviewed: Path | None = Field(
        default=None,
        description="A live review's report.json: the run registers its plan only when "
                    "it is the plan that review recorded.")
    plan_out: Path | None = Field(
        default=None,
        description="Where the program writes the digests of its plan (JSON), for the "
                    "review to record.")

    @property
    def approved_waves(self) -> frozenset[str]:
        return frozenset(w.strip() for w in self.approve.split(",") if w.strip())

    @classmethod
    def settings_customise_sources(
            cls, settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment only: no `.env` file or secrets directory is read."""
        return init_settings, env_settings


def variable(field: str) -> str:
    """The environment variable of a field: `sdk_wait` -> `KNATIVE_FLEET_SDK_WAIT`."""
    return PREFIX + field.upper()


def allowed(field: str) -> str:
    """What a field accepts, as the error message and docs/settings.md say it."""
    annotation = Settings.model_fields[field].annotation
    if get_origin(annotation) is Literal:
        return ", ".join(repr(value) for value in get_args(annotation))
    if annotation is bool:
        return BOOL_VALUES
    if annotation is str:
        return "text"
    return "a path"


def settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings of `environ` (default: this process's environment as it is now);
    SettingsError when a value is not allowed."""
    env = os.environ if environ is None else environ
    own = tuple(sorted((k, v) for k, v in env.items() if k.startswith(PREFIX)))
    return _built(own, os.environ.get("HOME"))


@functools.lru_cache(maxsize=32)
def _built(own: tuple[tuple[str, str], ...], home: str | None) -> Settings:
    """One Settings per distinct set of variables (and HOME, for the cache's default)."""
    try:
        return Settings(_build_sources=((_GivenEnviron(Settings, dict(own)),), {}))
    except ValidationError as exc:
        given = dict(own)
        lines = []
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else "?"
            name = variable(field)
            lines.append(f"{name}={given.get(name, error.get('input'))!r} is not allowed; "
                         f"allowed: {allowed(field) if field in Settings.model_fields else '?'}"
                         " (docs/settings.md)")
        raise SettingsError("\n".join(lines)) from None


class _GivenEnviron(EnvSettingsSource):
    """pydantic-settings' environment source, over a given mapping instead of
    `os.environ`: tests and `settings(environ)` build from their own."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._given = environ  # read by _load_env_vars, which the base's __init__ calls
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._given.items()
                if not (self.env_ignore_empty and v == "")}

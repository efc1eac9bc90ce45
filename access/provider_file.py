"""The access provider file: which exec plugin to run for which ClusterProfile provider.

Same JSON as cluster-inventory-api `pkg/access` (the operator's
`--clusterprofile-provider-file`), so one file serves both. We validate it strictly up
front: upstream silently ignores unknown keys, which turns a typo such as
`"provideClusterinfo"` into a plugin that fails much later with an unrelated error.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from core.errors import ProviderFileError
from core.problems import problem_lines
from core.strict import Strict

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")


class _Strict(Strict):
    """As every input model, and JSON types are not coerced (Go does not)."""

    model_config = ConfigDict(strict=True, frozen=True)


class ExecEnvVar(_Strict):
    """One environment variable for the plugin (clientcmd `ExecEnvVar`)."""

    name: str = Field(min_length=1)
    value: str


class ExecConfig(_Strict):
    """clientcmd `ExecConfig` as serialised in the provider file.

    `installHint` is accepted because client-go's ExecConfig has it and we show it when
    the plugin binary is missing. `interactiveMode` is accepted but always run as "Never".
    """

    apiVersion: str
    command: str = Field(min_length=1)
    args: list[str] = []
    env: list[ExecEnvVar] = []
    provideClusterInfo: bool = False
    interactiveMode: str | None = None
    installHint: str | None = None

    @field_validator("args", "env", mode="before")
    @classmethod
    def _null_is_empty(cls, value: object) -> object:
        # Go's encoding/json reads `null` as an empty slice; accept the same files.
        return [] if value is None else value

    @field_validator("apiVersion")
    @classmethod
    def _known_api_version(cls, value: str) -> str:
        if value not in EXEC_API_VERSIONS:
            raise ValueError(f"must be one of {', '.join(EXEC_API_VERSIONS)} (got {value!r})")
        return value

    @field_validator("interactiveMode")
    @classmethod
    def _known_interactive_mode(cls, value: str | None) -> str | None:
        if value is not None and value not in INTERACTIVE_MODES:
            raise ValueError(f"must be one of {', '.join(INTERACTIVE_MODES)} (got {value!r})")
        return value


class AccessProvider(_Strict):
    """One provider: its name (matched against ClusterProfile status) and how to run it."""

    name: str = Field(min_length=1)
    execConfig: ExecConfig | None = None
    profileSourcedCLIArgsPolicy: Literal["", "Append", "Ignore"] = ""
    profileSourcedEnvVarsPolicy: Literal["", "AppendIfNotExists", "Replace", "Ignore"] = ""


class ProviderFile(_Strict):
    """The whole file; provider names are unique because the first match would hide the rest."""

    providers: list[AccessProvider]

    @field_validator("providers")
    @classmethod
    def _unique_names(cls, providers: list[AccessProvider]) -> list[AccessProvider]:
        seen: dict[str, int] = {}
        for index, provider in enumerate(providers):
            if provider.name in seen:
                raise ValueError(
                    f"duplicate provider name {provider.name!r} "
                    f"(providers[{seen[provider.name]}] and providers[{index}])"
                )
            seen[provider.name] = index
        return providers

    def names(self) -> list[str]:
        """Provider names in file order, for messages."""
        return [p.name for p in self.providers]


def load_provider_file(path: str) -> ProviderFile:
    """Read and validate the provider file, or raise ProviderFileError naming every problem."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise ProviderFileError(
            f"access provider file {path!r} does not exist (set knative-fleet:providerFile "
            "to the path of a cluster-inventory-api provider JSON file)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProviderFileError(f"access provider file {path!r} cannot be read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProviderFileError(
            f"access provider file {path!r} is not valid JSON: {exc.msg} at line {exc.lineno} "
            f"column {exc.colno}"
        ) from None
    try:
        return ProviderFile.model_validate(data)
    except ValidationError as exc:
        raise ProviderFileError(
            f"access provider file {path!r} is invalid: {'; '.join(problem_lines(exc))}"
        ) from None

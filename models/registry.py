"""spec.registry: the model of the operator's ImageTransform
(pkg/reconciler/common/images.go): image overrides and pull secrets for air-gapped or
mirrored fleets; knative.transforms.registry applies it."""

from __future__ import annotations

from pydantic import Field, field_validator

from core.strict import Strict

# Replaced in `default` by the name of each release image.
NAME_VARIABLE = "${NAME}"


class LocalObjectReference(Strict):
    """A Secret in the install namespace, as a pod's `imagePullSecrets` entry names it."""

    name: str = Field(min_length=1)


class Registry(Strict):
    """`registry`: where the release's images come from, and how to pull them."""

    default: str | None = None
    override: dict[str, str] = {}
    image_pull_secrets: list[LocalObjectReference] = Field([], alias="imagePullSecrets")

    @field_validator("default")
    @classmethod
    def default_is_a_template(cls, value: str | None) -> str | None:
        # Without ${NAME} every container would get the same image.
        if value is not None and NAME_VARIABLE not in value:
            raise ValueError(
                f"default must contain {NAME_VARIABLE} (replaced by the name of each release "
                f"image, e.g. 'webhook' for '.../eventing/cmd/webhook@sha256:...'), e.g. "
                f"'registry.example.com/knative/{NAME_VARIABLE}:v1.23.0'; got {value!r}")
        return value

    @field_validator("override")
    @classmethod
    def override_entries(cls, value: dict[str, str]) -> dict[str, str]:
        for key, image in value.items():
            parts = key.split("/")
            if not key or len(parts) > 2 or not all(parts):
                raise ValueError(
                    f"override key {key!r} must be '<container>', '<image>', '<ENV_VAR>' "
                    f"or '<workload>/<container>'")
            if not image.strip():
                raise ValueError(f"override {key!r} has an empty image")
        return value

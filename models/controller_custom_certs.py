"""spec.controller-custom-certs: the model of the operator's CustomCertsTransform
(pkg/reconciler/knativeserving/common/certs.go); knative.transforms.controller_custom_certs
applies it. Serving only."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from core.strict import DNS_LABEL, Strict

# The operator names the volume custom-certs-<name>.
CUSTOM_CERTS_PREFIX = "custom-certs-"


class ControllerCustomCerts(Strict):
    """`controller-custom-certs`: a ConfigMap or Secret of CA certs the Serving controller
    trusts when it resolves image digests (registries with self-signed certs)."""

    type: Literal["ConfigMap", "Secret"]
    name: str

    @field_validator("name")
    @classmethod
    def volume_name_fits(cls, value: str) -> str:
        # The operator names the volume custom-certs-<name>: a DNS-1123 label of <= 63.
        volume = CUSTOM_CERTS_PREFIX + value
        if not DNS_LABEL.match(value) or len(volume) > 63:
            raise ValueError(
                f"name must be a DNS-1123 label of at most {63 - len(CUSTOM_CERTS_PREFIX)} "
                f"characters (it becomes the volume name {CUSTOM_CERTS_PREFIX}<name>), "
                f"got {value!r}")
        return value

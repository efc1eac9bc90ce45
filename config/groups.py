"""`knative-fleet:groups`: spokes chosen by ClusterProfile labels instead of by name.

A group gives its `serving`/`eventing` spec to every ClusterProfile of one inventory
namespace its selector matches; the spoke is named after the ClusterProfile.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from config.selector import LabelSelector
from core.strict import DNS_LABEL, Strict
from knative.spec.component import EventingSpec, ServingSpec

# What happens to a spoke the group managed on the last run and no longer selects.
FAIL = "Fail"
UNINSTALL = "Uninstall"


class FleetGroup(Strict):
    name: str
    namespace: Annotated[str, Field(min_length=1)]
    selector: LabelSelector
    serving: ServingSpec | None = None
    eventing: EventingSpec | None = None
    when_deselected: Literal["Fail", "Uninstall"] = Field(FAIL, alias="whenDeselected")

    @field_validator("name")
    @classmethod
    def dns_label(cls, value: str) -> str:
        if not DNS_LABEL.match(value):
            raise ValueError(f"group name must be a DNS-1123 label (a-z, 0-9, -), got {value!r}")
        return value

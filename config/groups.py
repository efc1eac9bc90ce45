"""`knative-fleet:groups`: spokes chosen by ClusterProfile labels instead of by name.

A group gives its `serving`/`eventing` spec to every ClusterProfile of one inventory
namespace its selector matches; the spoke is named after the ClusterProfile.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from config.identity import SpokeIdentity
from config.selector import LabelSelector
from config.when_deselected import FAIL
from core.strict import Strict, dns_label_name
from models.component import EventingSpec, ServingSpec

GroupName = dns_label_name("group name")


class FleetGroup(Strict):
    name: GroupName
    namespace: Annotated[str, Field(min_length=1)]
    selector: LabelSelector
    serving: ServingSpec | None = None
    eventing: EventingSpec | None = None
    # Who its spokes' credentials are for, when not the stack's `spokeIdentity`.
    spoke_identity: SpokeIdentity | None = Field(None, alias="spokeIdentity")
    when_deselected: Literal["Fail", "Uninstall"] = Field(FAIL, alias="whenDeselected")

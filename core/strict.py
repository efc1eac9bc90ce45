"""The base every model of user-written input shares, and the names it checks."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

# A Kubernetes object name that must be a DNS-1123 label (RFC 1123): spoke names,
# Service and Secret names the spec refers to.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class Strict(BaseModel):
    """Unknown keys are typos until proven otherwise: refuse them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

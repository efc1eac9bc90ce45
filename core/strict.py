"""The base every user-written config model shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Unknown keys are typos until proven otherwise: refuse them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

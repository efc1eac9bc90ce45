"""A Kubernetes label selector as users write it for groups and waves
(metav1.LabelSelector: `matchLabels` and `matchExpressions`), and how it matches.

The semantics are the apimachinery ones (`labels.Selector` from
`metav1.LabelSelectorAsSelector`): every requirement must hold; an empty selector
matches every object; `NotIn` and `DoesNotExist` hold for an object without the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, model_validator

from core.strict import Strict


class Requirement(Strict):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] = []

    @model_validator(mode="after")
    def values_fit_operator(self) -> Requirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs at least one value "
                             f"(key {self.key!r})")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values (key {self.key!r})")
        return self

    def holds(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        return self.key not in labels or labels[self.key] not in self.values


class LabelSelector(Strict):
    """`{}` selects everything, as in Kubernetes."""

    match_labels: dict[str, str] = Field({}, alias="matchLabels")
    match_expressions: list[Requirement] = Field([], alias="matchExpressions")

    def matches(self, labels: Mapping[str, str]) -> bool:
        return (all(labels.get(k) == v for k, v in self.match_labels.items())
                and all(r.holds(labels) for r in self.match_expressions))

    def describe(self) -> str:
        """The selector in kubectl's `-l` syntax, for messages."""
        parts = [f"{k}={v}" for k, v in sorted(self.match_labels.items())]
        for r in self.match_expressions:
            if r.operator == "Exists":
                parts.append(r.key)
            elif r.operator == "DoesNotExist":
                parts.append(f"!{r.key}")
            else:
                op = "in" if r.operator == "In" else "notin"
                parts.append(f"{r.key} {op} ({','.join(r.values)})")
        return ",".join(parts) or "(everything)"

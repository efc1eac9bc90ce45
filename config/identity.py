"""Who the access provider's credentials are for on each spoke, as the user writes it
(`ServiceAccount:NAMESPACE/NAME`, `User:NAME` or `Group:NAME`): the rights command binds
its role to it, and the plan binds Secret reads in each install namespace to it
(knative.secret_reads)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator

from core.names import RBAC_GROUP

DEFAULT_SPOKE_IDENTITY = "ServiceAccount:kube-system/knative-fleet-spoke"


def subject_of(text: str) -> dict[str, str]:
    """The identity as an RBAC subject; raises ValueError naming the accepted forms."""
    kind, _, name = text.partition(":")
    if kind == "ServiceAccount":
        namespace, _, account = name.partition("/")
        if not namespace or not account or "/" in account:
            raise ValueError(f"{text!r}: a ServiceAccount is ServiceAccount:NAMESPACE/NAME")
        return {"kind": kind, "name": account, "namespace": namespace}
    if kind in ("User", "Group") and name:
        return {"kind": kind, "name": name, "apiGroup": RBAC_GROUP}
    raise ValueError(f"{text!r}: give ServiceAccount:NAMESPACE/NAME, User:NAME or Group:NAME")


def _checked(text: str) -> str:
    subject_of(text)
    return text


SpokeIdentity: Any = Annotated[str, AfterValidator(_checked)]

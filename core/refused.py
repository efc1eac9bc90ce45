"""When the Kubernetes API refused a request, decided once: 401 (the credential was
rejected) or 403 (the identity may not do it). A refused read is what the identity may
not see, reported as such (the facts of a spoke, the owner guard's records, the hub's
ClusterProfile); any other failure is the API's or the network's. A leaf: it takes the
client's `ApiException` by its `status` and imports nothing."""

from __future__ import annotations

REFUSED_STATUSES = frozenset({401, 403})


def is_refused(exc: BaseException) -> bool:
    """Whether `exc` is an API answer that refuses the request (HTTP 401 or 403)."""
    return getattr(exc, "status", None) in REFUSED_STATUSES

"""Creating and deleting objects so that a run may find the work already done: a set-up
that is run again finds its objects there (409), a cleanup finds them gone (404)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.client.rest import ApiException


def create_if_absent(create: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """`create(*args, **kwargs)`, where AlreadyExists counts as done; other errors raise."""
    try:
        create(*args, **kwargs)
    except ApiException as exc:
        if exc.status != 409:
            raise


def if_present(call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """`call(*args, **kwargs)` on an object that may be gone, where Not Found counts as
    done (a delete, or a patch of an object being deleted); other errors raise."""
    try:
        call(*args, **kwargs)
    except ApiException as exc:
        if exc.status != 404:
            raise


def delete_if_present(delete: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """`delete(*args, **kwargs)`, where Not Found counts as done; other errors raise."""
    if_present(delete, *args, **kwargs)

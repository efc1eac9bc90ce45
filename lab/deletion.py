"""Deleting an object that may already be gone: a cleanup wants it absent, and a 404
says it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.client.rest import ApiException


def delete_if_present(delete: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """`delete(*args, **kwargs)`, where Not Found counts as done; other errors raise."""
    try:
        delete(*args, **kwargs)
    except ApiException as exc:
        if exc.status != 404:
            raise

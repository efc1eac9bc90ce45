"""How a dynamic resource reaches its spoke at the time it runs: the connection kept
as plain resource data (no credential), and a client with a credential the exec
plugin issues then, as the Kubernetes provider does."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from kubernetes.client import ApiClient

from .connection import SpokeConnection
from .exec_plugin import run_exec_plugin
from .spoke_facts import spoke_api_client


def connection_props(conn: SpokeConnection) -> dict[str, Any]:
    """A SpokeConnection as plain data for a resource input."""
    return dataclasses.asdict(conn)


def connection_from_props(props: dict[str, Any]) -> SpokeConnection:
    """The SpokeConnection back from resource outputs (Pulumi drops the unset fields)."""
    data = {f.name: props.get(f.name) for f in dataclasses.fields(SpokeConnection)}
    data["args"] = tuple(data["args"] or ())
    data["env"] = tuple(tuple(p) for p in data["env"] or ())
    data["insecure_skip_tls_verify"] = bool(data["insecure_skip_tls_verify"])
    data["provide_cluster_info"] = bool(data["provide_cluster_info"])
    return SpokeConnection(**data)


@contextlib.contextmanager
def spoke_client(connection: dict[str, Any], plugin_timeout_s: float) -> Iterator[ApiClient]:
    """An API client for the spoke, usable for the block."""
    conn = connection_from_props(connection)
    credential = run_exec_plugin(conn, timeout=plugin_timeout_s)
    with spoke_api_client(conn, credential) as api:
        yield api

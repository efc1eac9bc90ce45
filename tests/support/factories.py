"""Plain objects the unit tests share."""

from __future__ import annotations

from access import SpokeConnection


def spoke_connection() -> SpokeConnection:
    """A connection to a local spoke through the `secretreader` plugin."""
    return SpokeConnection(
        server="https://127.0.0.1:6443", certificate_authority_data=None, proxy_url=None,
        tls_server_name=None, insecure_skip_tls_verify=False, provider_name="secretreader",
        exec_api_version="client.authentication.k8s.io/v1", command="/bin/secretreader",
        args=(), env=(), provide_cluster_info=True, exec_extension={"clusterName": "s"})

"""Read ClusterProfiles from the hub with the official kubernetes client.

The client's defaults (3 urllib3 retries, no request timeout) make a dead hub hang a
`pulumi up` for minutes; we retry connects once, never reads, and time requests out.
"""

from __future__ import annotations

import json

import kubernetes
import urllib3
from kubernetes.client.exceptions import ApiException
from urllib3 import exceptions as u3

from core.errors import ProfileError
from core.reasons import Reason
from core.refused import is_refused

from .network import HUB, Failure

GROUP = "multicluster.x-k8s.io"
VERSION = "v1alpha1"
PLURAL = "clusterprofiles"


def _unavailable(message: str) -> ProfileError:
    return ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, message)


def hub_api_client(kubeconfig: str | None, context: str | None) -> kubernetes.client.ApiClient:
    """An API client for the hub from a kubeconfig file (None: $KUBECONFIG/~/.kube/config)."""
    configuration = kubernetes.client.Configuration()
    configuration.retries = urllib3.Retry(total=1, connect=1, read=0, status=0, redirect=0)
    try:
        return kubernetes.config.new_client_from_config(
            config_file=kubeconfig,
            context=context,
            persist_config=False,
            client_configuration=configuration,
        )
    except Exception as exc:  # noqa: BLE001 - ConfigException, OSError, YAML...: all "no hub"
        where = kubeconfig or "the default kubeconfig ($KUBECONFIG or ~/.kube/config)"
        ctx = f" (context {context!r})" if context else ""
        raise _unavailable(f"cannot load hub kubeconfig {where}{ctx}: {exc}") from None


def _api_message(exc: ApiException) -> str:
    try:
        return str(json.loads(exc.body).get("message") or exc.reason)
    except (TypeError, ValueError, AttributeError):
        return str(exc.reason)


def _is_profile_404(exc: ApiException) -> bool:
    """A Status body naming the object means the object is missing, not the CRD."""
    try:
        details = json.loads(exc.body).get("details") or {}
    except (TypeError, ValueError, AttributeError):
        return False
    return details.get("kind") == PLURAL or bool(details.get("name"))


def read_cluster_profile(
    api: kubernetes.client.ApiClient, namespace: str, name: str, timeout: float = 10.0
) -> dict:
    """The ClusterProfile as a plain dict (the CRD's JSON), or a classified ProfileError."""
    ref = f"ClusterProfile {namespace}/{name}"
    host = api.configuration.host
    try:
        return kubernetes.client.CustomObjectsApi(api).get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, name, _request_timeout=(timeout, timeout)
        )
    except ApiException as exc:
        if exc.status == 404:
            crd = (
                ""
                if _is_profile_404(exc)
                else (
                    f" (the hub does not serve {PLURAL}.{GROUP}/{VERSION}: is the CRD installed?)"
                )
            )
            raise ProfileError(
                Reason.CLUSTER_PROFILE_NOT_FOUND, f"{ref} not found on the hub{crd}"
            ) from None
        if not exc.status:  # the client turns urllib3 SSLError into status 0
            reason = str(exc.reason).replace("\n", ": ")
            tls = HUB.say(Failure.TLS, server=host, timeout=timeout, detail=reason)
            raise _unavailable(f"cannot read {ref}: {tls}") from None
        if is_refused(exc):
            word = "rejected our credentials" if exc.status == 401 else "denied access"
            raise _unavailable(
                f"the hub {word} ({exc.status}) reading {ref}: {_api_message(exc)}"
            ) from None
        raise _unavailable(
            f"the hub answered HTTP {exc.status} reading {ref}: {_api_message(exc)}"
        ) from None
    except u3.HTTPError as exc:
        cause = HUB.describe(exc, server=host, timeout=timeout)
        raise _unavailable(f"cannot read {ref}: {cause}") from None
    except Exception as exc:  # noqa: BLE001 - auth refresh etc.: one spoke must not crash all
        raise _unavailable(f"cannot read {ref}: {type(exc).__name__}: {exc}") from None


def list_cluster_profiles(
    api: kubernetes.client.ApiClient, namespace: str, timeout: float = 20.0
) -> list[dict]:
    """Every ClusterProfile of an inventory namespace (groups select from them)."""
    where = f"ClusterProfiles in namespace {namespace}"
    host = api.configuration.host
    try:
        found = kubernetes.client.CustomObjectsApi(api).list_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, _request_timeout=(timeout, timeout))
        return list(found.get("items") or [])
    except ApiException as exc:
        if exc.status == 404:
            raise _unavailable(
                f"the hub does not serve {PLURAL}.{GROUP}/{VERSION}: is the CRD installed?"
            ) from None
        raise _unavailable(
            f"the hub answered HTTP {exc.status or 'error'} listing {where}: "
            f"{_api_message(exc) if exc.status else exc.reason}") from None
    except u3.HTTPError as exc:
        cause = HUB.describe(exc, server=host, timeout=timeout)
        raise _unavailable(f"cannot list {where}: {cause}") from None
    except Exception as exc:  # noqa: BLE001 - auth refresh etc.
        raise _unavailable(f"cannot list {where}: {type(exc).__name__}: {exc}") from None

"""`controller-custom-certs` against the real 1.23 Serving release (operator parity:
pkg/reconciler/knativeserving/common/certs.go)."""

from __future__ import annotations

import copy

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from knative.manifests import Rendered
from knative.transforms import controller_custom_certs
from models.component import EventingSpec, ServingSpec
from models.controller_custom_certs import ControllerCustomCerts
from tests.support.releases import eventing, find, serving, without


def apply_custom_certs(rendered: Rendered, certs: ControllerCustomCerts | None) -> Rendered:
    return controller_custom_certs.transform(rendered,
                                             ServingSpec(controller_custom_certs=certs))


def pod(rendered: Rendered, name: str) -> dict:
    return find(rendered, "Deployment", name)["spec"]["template"]["spec"]


# --- model ----------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, message", [
    ({"type": "Volume", "name": "certs"}, "type"),
    ({"type": "Secret"}, "name"),
    ({"type": "Secret", "name": "Certs"}, "DNS-1123 label"),
    ({"type": "Secret", "name": "c" * 51}, "at most 50"),
    ({"type": "Secret", "name": "certs", "key": "ca.crt"}, "key"),
])
def test_bad_custom_certs_are_refused(raw: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ControllerCustomCerts.model_validate(raw)


# --- transform ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, source", [
    ("ConfigMap", {"configMap": {"name": "registry-ca"}}),
    ("Secret", {"secret": {"secretName": "registry-ca"}}),
])
def test_custom_certs_mount_into_the_controller(kind: str, source: dict) -> None:
    base = serving()
    out = apply_custom_certs(serving(), ControllerCustomCerts(type=kind, name="registry-ca"))
    spec = pod(out, "controller")
    base_container = pod(base, "controller")["containers"][0]
    assert spec["volumes"] == [{"name": "custom-certs-registry-ca", **source}]
    container = spec["containers"][0]
    assert container["volumeMounts"] == [
        {"name": "custom-certs-registry-ca", "mountPath": "/custom-certs"}]
    assert container["env"] == [*base_container["env"],
                                {"name": "SSL_CERT_DIR", "value": "/custom-certs"}]


def test_custom_certs_twice_is_the_same_as_once() -> None:
    certs = ControllerCustomCerts.model_validate({"type": "Secret", "name": "ca"})
    once = apply_custom_certs(serving(), certs)
    assert apply_custom_certs(copy.deepcopy(once), certs) == once


def test_no_custom_certs_changes_nothing() -> None:
    assert apply_custom_certs(serving(), None) == serving()


def test_custom_certs_without_a_controller_is_an_error() -> None:
    with pytest.raises(TransformError, match="Deployment 'controller'"):
        apply_custom_certs(without(serving(), "Deployment", "controller"),
                           ControllerCustomCerts(type="ConfigMap", name="ca"))


def test_eventing_has_no_custom_certs() -> None:
    assert controller_custom_certs.transform(eventing(), EventingSpec()) == eventing()

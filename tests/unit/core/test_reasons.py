"""Reason names, remediation text, and the error users read."""

from __future__ import annotations

import pickle

from access import REMEDIATION, ProfileError, Reason, ResolutionError
from access.redact import REDACTED, redact


def test_reason_values_are_the_operator_names() -> None:
    assert [r.value for r in Reason] == [
        "ClusterProfileNotFound",
        "ClusterProfileNotReady",
        "ClusterProfileUnavailable",
        "MulticlusterDisabled",
        "AccessProviderFailed",
        "RemoteClientCreationFailed",
        "ManifestsUnavailable",
        "InvalidSpec",
        "SpokeDeselected",
        "SpokeAccessDenied",
        "SpokeOwnedByAnotherStack",
        "SpokeOwnerUnknown",
        "KnativeOperatorActive",
        "AnchorBeingDeleted",
    ]


def test_every_reason_has_a_remediation() -> None:
    assert set(REMEDIATION) == set(Reason)
    assert "knative-fleet:providerFile" in REMEDIATION[Reason.MULTICLUSTER_DISABLED]
    assert "clusterProfileRef" in REMEDIATION[Reason.CLUSTER_PROFILE_NOT_FOUND]


def test_resolution_error_text() -> None:
    err = ResolutionError("eu-1", Reason.CLUSTER_PROFILE_NOT_READY, "not healthy")
    assert str(err) == (
        f"spoke 'eu-1': ClusterProfileNotReady: not healthy. "
        f"Fix: {REMEDIATION[Reason.CLUSTER_PROFILE_NOT_READY]}"
    )
    assert (err.spoke, err.reason, err.message) == (
        "eu-1",
        Reason.CLUSTER_PROFILE_NOT_READY,
        "not healthy",
    )


def test_errors_survive_pickling() -> None:
    err = pickle.loads(pickle.dumps(ResolutionError("s", Reason.MULTICLUSTER_DISABLED, "m")))
    assert str(err).startswith("spoke 's': MulticlusterDisabled: m.")
    perr = pickle.loads(pickle.dumps(ProfileError(Reason.ACCESS_PROVIDER_FAILED, "x")))
    assert (perr.reason, perr.message) == (Reason.ACCESS_PROVIDER_FAILED, "x")


def test_redact_hides_token_looking_values() -> None:
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl"
    text = (
        f"got {jwt}; Authorization: Bearer abc.def; token=s3cr3t; "
        '"password": "hunter2"; hex 0123456789abcdef0123456789abcdef01; '
        "opaque Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRg== known-secret-value"
    )
    out = redact(text, ["known-secret-value"])
    for secret in (
        jwt,
        "abc.def",
        "s3cr3t",
        "hunter2",
        "0123456789abcdef",
        "Zm9vYmFy",
        "known-secret-value",
    ):
        assert secret not in out
    assert out.count(REDACTED) == 7


def test_redact_keeps_ordinary_errors() -> None:
    line = (
        '[secretreader] failed to get secret fleet-system/spoke-1: secrets "spoke-1" '
        'not found; missing "token" key; /credential-plugin/plugin-binary'
    )
    assert redact(line) == line

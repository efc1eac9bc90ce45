"""A resource that keeps only some outputs resolves those as the SDK does (the kept
fields of an object output, the whole of any other), has no attribute for the rest, and
every other resource resolves all of its outputs; installed unless the SDK's are asked
for, over the SDK functions it was checked against (its guard: test_speedup_registry.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pytest
from pulumi.runtime import rpc

from components.release_object import ReleaseObject
from sdk_speedups import kept_outputs as sdk_kept_outputs
from sdk_speedups.registry import by_name, sdk_source_sha256

SDK_OUTPUTS_ENV = "KNATIVE_FLEET_SDK_OUTPUTS"
SDK = sdk_kept_outputs.sdk_functions()
LIVE = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "activator", "namespace": "knative-serving", "uid": "u-1",
                 "resourceVersion": "42", "generation": 3, "labels": {"a": "b"},
                 "managedFields": [{"manager": "knative-fleet", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
    "status": {"availableReplicas": 1},
}
IDENTITY = {"name", "namespace", "uid", "resourceVersion", "generation"}
Use = Callable[[str, Mapping[str, str]], bool]


class Live(pulumi.runtime.Mocks):
    """The provider's outputs: the live object, more than the inputs."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        return f"{args.name}-id", {**LIVE, "spec": args.inputs.get("spec")}

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


class KeepsWholeSpec(pulumi.CustomResource):
    kept_outputs = {"spec": None}


def _resolved(cls: type, preview: bool = False) -> dict[str, Any]:
    """Each resolved output of one resource of `cls`, and which attributes it has."""
    pulumi.runtime.set_mocks(Live(), preview=preview)
    seen: dict[str, Any] = {}

    @pulumi.runtime.test
    def program() -> pulumi.Output:
        res = cls("kubernetes:apps/v1:Deployment", "activator",
                  {k: v for k, v in LIVE.items() if k != "status"})
        seen["attributes"] = {k for k in ("apiVersion", "kind", "metadata", "spec")
                              if hasattr(res, k)}
        outs = {k: getattr(res, k) for k in seen["attributes"]}
        return pulumi.Output.all(res.id, outs).apply(lambda v: seen.update(id=v[0], **v[1]))

    program()
    return seen


def test_the_sdk_functions_are_the_reviewed_ones() -> None:
    # Fails when the SDK's functions change: review the wrappers, then the hashes.
    assert (sdk_source_sha256(by_name("kept_outputs"))
            == by_name("kept_outputs").reviewed_sha256)


def test_installed_unless_the_sdk_ones_are_asked_for(use_speedup: Use) -> None:
    assert use_speedup("kept_outputs", {SDK_OUTPUTS_ENV: "sdk"}) is False
    assert rpc.resolve_outputs is SDK["resolve_outputs"]
    assert use_speedup("kept_outputs", {}) is True
    assert rpc.resolve_outputs.sdk_resolve_outputs is SDK["resolve_outputs"]
    assert rpc.transfer_properties.sdk_transfer_properties is SDK["transfer_properties"]


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
def test_a_release_object_keeps_the_identity_in_its_metadata(preview: bool,
                                                              use_speedup: Use) -> None:
    want = _resolved(pulumi.CustomResource, preview)
    use_speedup("kept_outputs", {})
    got = _resolved(ReleaseObject, preview)
    assert got["attributes"] == {"metadata"}
    assert got["id"] == want["id"]
    assert got["metadata"] == {k: v for k, v in want["metadata"].items() if k in IDENTITY}
    assert set(got["metadata"]) == IDENTITY


def test_a_kept_output_without_fields_is_whole(use_speedup: Use) -> None:
    want = _resolved(pulumi.CustomResource)
    use_speedup("kept_outputs", {})
    got = _resolved(KeepsWholeSpec)
    assert got["attributes"] == {"spec"}
    assert got["spec"] == want["spec"] == LIVE["spec"]


def test_other_resources_keep_every_output(use_speedup: Use) -> None:
    want = _resolved(pulumi.CustomResource)
    use_speedup("kept_outputs", {})
    got = _resolved(pulumi.CustomResource)
    assert got == want
    assert got["attributes"] == {"apiVersion", "kind", "metadata", "spec"}
    assert got["metadata"]["managedFields"] == LIVE["metadata"]["managedFields"]


def test_a_secret_metadata_is_kept_whole_and_secret() -> None:
    from google.protobuf import struct_pb2

    outputs = struct_pb2.Struct()
    outputs.update({"metadata": {rpc._special_sig_key: rpc._special_secret_sig,
                                 "value": {"uid": "u", "managedFields": []}},
                    "spec": {"x": 1}})
    kept = sdk_kept_outputs._only(outputs, ReleaseObject.kept_outputs)
    assert set(kept.fields) == {"metadata"}
    assert kept.fields["metadata"] == outputs.fields["metadata"]

"""The package's Fleet component as its schema describes it: every key a stack file has
under `knative-fleet:` is an input of the same name, the outputs are the program's stack
outputs, the checked-in schema (package/schema.json, which `pulumi package get-schema`
gives: tests/e2e/test_package_schema.py) has the types the host infers, and the inputs become
the stack file's config, so the same validation reports the same config paths."""

from __future__ import annotations

import json

import pytest
from pulumi.provider.experimental.component import ComponentProvider

from components.fleet_args import stack_config_of
from components.fleet_component import Fleet
from config.fleet import parse_fleet_config
from config.stack_config import stack_config_keys
from core.errors import FleetConfigError
from lab.paths import REPO

SCHEMA = REPO / "package" / "schema.json"


def inferred() -> dict:
    provider = ComponentProvider([Fleet], "knative-fleet")
    return json.loads(provider.schema or "{}")


def test_every_stack_config_key_is_an_input_and_the_outputs_are_the_programs() -> None:
    fleet = inferred()["resources"]["knative-fleet:index:Fleet"]
    assert set(fleet["inputProperties"]) == set(stack_config_keys())
    assert set(fleet["properties"]) == {"spokes", "waves", "approvals", "ring", "ownerId"}
    assert fleet["isComponent"] is True


def test_the_checked_in_schema_has_the_inferred_types_and_properties() -> None:
    """The CLI normalises what the host infers (tests/e2e/test_package_schema.py holds it
    to the file word for word); here: the same types, inputs and outputs."""
    checked_in, now = json.loads(SCHEMA.read_text()), inferred()
    assert checked_in["types"].keys() == now["types"].keys()
    for name, typ in now["types"].items():
        assert checked_in["types"][name]["properties"].keys() == typ["properties"].keys()
    fleet, fleet_now = (s["resources"]["knative-fleet:index:Fleet"] for s in (checked_in, now))
    assert fleet["inputProperties"].keys() == fleet_now["inputProperties"].keys()
    assert fleet["properties"].keys() == fleet_now["properties"].keys()


def test_inputs_become_the_stack_files_config() -> None:
    args = {"provider_file": "/p.json", "ring": 2.0, "hub": {"kubeconfig": "/h"},
            "fleet": [{"name": "eu-1", "cluster_profile_ref": {"name": "eu-1",
                                                               "namespace": "inv"},
                       "serving": {"version": "1.23",
                                   "config": {"network": {"ingress-class": "x"}}},
                       "eventing": None}],
            "rollout": {"waves": [{"name": "all", "max_parallel": 3.0}]}}
    assert stack_config_of(args) == {
        "providerFile": "/p.json", "ring": 2, "hub": {"kubeconfig": "/h"},
        "fleet": [{"name": "eu-1", "clusterProfileRef": {"name": "eu-1", "namespace": "inv"},
                   "serving": {"version": "1.23",
                               "config": {"network": {"ingress-class": "x"}}}}],
        "rollout": {"waves": [{"name": "all", "maxParallel": 3}]}}


def test_a_bad_input_names_the_stack_files_config_path() -> None:
    args = {"fleet": [{"name": "Bad_Name",
                       "cluster_profile_ref": {"name": "x", "namespace": "inv"}}]}
    with pytest.raises(FleetConfigError) as err:
        parse_fleet_config(stack_config_of(args))
    assert "knative-fleet:fleet[0].name: spoke name must be a DNS-1123 label" in str(err.value)

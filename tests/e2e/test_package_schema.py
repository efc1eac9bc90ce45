"""The package's schema as a team's `pulumi package add` sees it: `pulumi package
get-schema` of the provider, on the released CLI, is the checked-in package/schema.json
word for word (regenerate it with the command below when the inputs change)."""

from __future__ import annotations

import json
import subprocess

import pytest

from lab.handle import Lab
from lab.paths import REPO
from lab.toolchain import tool_env

pytestmark = pytest.mark.e2e
PROVIDER = REPO / "package" / "pulumi-resource-knative-fleet"


def test_get_schema_gives_the_checked_in_schema(lab: Lab, tmp_path) -> None:
    env = tool_env(lab.bin, binaries="released")
    got = subprocess.run(["pulumi", "package", "get-schema", str(PROVIDER)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    checked_in = (REPO / "package" / "schema.json").read_text()
    assert got.stdout == checked_in, (
        "package/schema.json is stale: pulumi package get-schema "
        "package/pulumi-resource-knative-fleet > package/schema.json")
    fleet = json.loads(got.stdout)["resources"]["knative-fleet:index:Fleet"]
    assert fleet["isComponent"] is True

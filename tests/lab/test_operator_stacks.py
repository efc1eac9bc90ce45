"""The runner's Pulumi Kubernetes Operator objects, created server-side (dry run, strict
field validation) on the lab hub against the operator's own CRDs, unmodified: the example
file (runner/examples/operator-stacks.yaml) and what `python -m runner operator-stacks`
prints for three rings of stacks."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from lab.crds import install_crds
from lab.handle import Lab
from lab.paths import PULUMI_OPERATOR_CRDS, REPO
from lab.removal import delete_namespaces_then_crds

pytestmark = pytest.mark.lab
EXAMPLE = REPO / "runner" / "examples" / "operator-stacks.yaml"
NAMESPACE = "pulumi-fleet"


@pytest.fixture(scope="module")
def hub(lab: Lab) -> Iterator[Lab]:
    """The operator's CRDs and the Stack objects' namespace on the hub, for this module."""
    crds = [yaml.safe_load(p.read_text()) for p in sorted(PULUMI_OPERATOR_CRDS.glob("*.yaml"))]
    assert len(crds) == 4, f"expected the operator's 4 CRDs in {PULUMI_OPERATOR_CRDS}"
    names = [crd["metadata"]["name"] for crd in crds]
    try:
        install_crds(lab.hub.api(), crds)
        client.CoreV1Api(lab.hub.api()).create_namespace({"metadata": {"name": NAMESPACE}})
        yield lab
    finally:
        delete_namespaces_then_crds(lab.hub.api(), (NAMESPACE,), names)


def kubectl(lab: Lab, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(lab.bin / "kubectl"), "--kubeconfig", lab.hub.kubeconfig, *args],
                          input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)


def dry_run(lab: Lab, text: str) -> subprocess.CompletedProcess:
    """Applied server-side as a dry run: the API server validates every object against its
    schema, strictly (an unknown field is an error), and stores nothing."""
    return kubectl(lab, "apply", "--server-side", "--dry-run=server", "--validate=strict",
                   "--field-manager=knative-fleet-test", "-o", "name", "-f", "-", stdin=text)


def test_the_example_file_is_accepted_as_it_is(hub: Lab) -> None:
    proc = dry_run(hub, EXAMPLE.read_text())
    assert proc.returncode == 0, proc.stdout
    created = proc.stdout.split()
    assert created.count("stack.pulumi.com/prod-eu-canary") == 1, proc.stdout
    assert "stack.pulumi.com/prod-eu-main" in created, proc.stdout


def test_generated_stacks_of_three_rings_are_accepted(hub: Lab, tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: knative-fleet\n")
    for name, ring in (("eu-canary", 1), ("eu-main", 2), ("us-main", 2), ("ap-main", 3)):
        (tmp_path / f"Pulumi.{name}.yaml").write_text(
            yaml.safe_dump({"config": {"knative-fleet:ring": ring}}))
    gen = subprocess.run(
        [sys.executable, "-m", "runner", "operator-stacks", "--project-dir", str(tmp_path),
         "--repo", "https://git.example.com/platform/knative-fleet.git",
         "--organization", "acme", "--repo-dir", "fleet"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert gen.returncode == 0, gen.stderr
    objs = list(yaml.safe_load_all(gen.stdout))
    assert [p["name"] for p in objs[-1]["spec"]["prerequisites"]] == ["eu-main", "us-main"]
    proc = dry_run(hub, gen.stdout)
    assert proc.returncode == 0, proc.stdout
    assert len(proc.stdout.split()) == 4, proc.stdout


def test_the_dry_run_does_refuse_what_the_crd_does_not_allow(hub: Lab) -> None:
    """The checks above mean something: a misspelt field and a wrong type are refused."""
    stack = next(d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d["kind"] == "Stack")
    misspelt = {**stack, "spec": {**stack["spec"], "prerequisite": []}}
    proc = dry_run(hub, yaml.safe_dump(misspelt))
    assert proc.returncode != 0 and "prerequisite" in proc.stdout, proc.stdout
    wrong_type = {**stack, "spec": {**stack["spec"], "resyncFrequencySeconds": "often"}}
    proc = dry_run(hub, yaml.safe_dump(wrong_type))
    assert proc.returncode != 0 and "resyncFrequencySeconds" in proc.stdout, proc.stdout

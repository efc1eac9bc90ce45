"""The shards as Pulumi Kubernetes Operator `Stack` objects: the same stacks and rings the
runner drives from CI, run instead by the operator on the hub (pulumi.com/v1 `Stack`,
operator v2).

One `Stack` per stack file. The ring rule becomes the operator's `prerequisites`: a stack
of ring N names every stack of the ring before it, so the operator starts it only once
each of those succeeded within `ring_window`. `continueResyncOnCommitMatch` with
`refresh` makes the operator re-apply every `resync_seconds` even when the commit did not
change: the continuous reconcile the Knative Operator's resync gives, and the drift
repair of `make drift-repair`. `destroyOnFinalize` stays false: deleting a `Stack` object
must never uninstall Knative from a fleet (uninstall is `python -m runner destroy`).
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from core.strict import Strict, dns_label_name
from runner.plan import rings
from runner.selection import SelectionError, StackFile

API_VERSION, KIND = "pulumi.com/v1", "Stack"
RING_LABEL = "knative-fleet.dev/ring"
# A Stack object's name is a DNS-1123 subdomain; a stack name may hold more (`_`, upper case).
Namespace = dns_label_name("the Stack objects' namespace")
_OBJECT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


class OperatorStackSettings(Strict):
    """What every generated `Stack` shares: where the program is, where state lives and
    how the workspace gets its secrets."""

    repo: str = Field(min_length=1, description="git URL of the repository with this project")
    branch: str = "main"
    repo_dir: str = Field("", description="the project's directory inside the repository")
    namespace: Namespace = "pulumi-fleet"
    backend: str = Field("", description="PULUMI_BACKEND_URL of the stacks' state")
    organization: str = Field("", description="prefix of the stack name (`org/stack`)")
    passphrase_secret: str = Field(
        "fleet-passphrase", description="Secret (key `passphrase`) with PULUMI_CONFIG_PASSPHRASE")
    service_account: str = Field("knative-fleet", description="the workspace's identity")
    image: str = Field("", description="workspace image holding the toolchain (docs/toolchain.md)")
    resync_seconds: int = Field(600, ge=60, description="how often the operator re-applies "
                                "each stack, changed commit or not (at least 60)")
    ring_window: str = Field("24h", pattern=r"^([0-9]+(\.[0-9]+)?(h|m|s))+$",
                             description="how recently ring N-1 must have succeeded for "
                             "ring N to run (a Go duration: 24h, 90m)")

    @field_validator("repo")
    @classmethod
    def _no_credentials(cls, value: str) -> str:
        if re.match(r"^[a-z+]+://[^/@]+:[^/@]+@", value):
            raise ValueError("the repository URL carries a password; give the operator "
                             "git credentials with a gitAuth Secret instead")
        return value


def stack_objects(stacks: list[StackFile], settings: OperatorStackSettings) -> list[dict]:
    """One `Stack` per stack, in ring order; ring N's stacks wait for ring N-1's."""
    bad = [s.name for s in stacks if not _OBJECT_NAME.match(s.name)]
    if bad:
        raise SelectionError(
            "these stack names cannot name a Kubernetes object (lower case letters, digits, "
            f"'-' and '.' only): {', '.join(bad)}; rename the stack files")
    objects, previous = [], []
    for ring in rings(stacks):
        for stack in ring.stacks:
            objects.append(_stack(stack, previous, settings))
        previous = ring.names
    return objects


def _stack(stack: StackFile, after: list[str], s: OperatorStackSettings) -> dict:
    spec: dict = {
        "stack": f"{s.organization}/{stack.name}" if s.organization else stack.name,
        "projectRepo": s.repo,
        "branch": s.branch,
        "envRefs": {
            "PULUMI_CONFIG_PASSPHRASE": {
                "type": "Secret", "secret": {"name": s.passphrase_secret, "key": "passphrase"}},
            "PULUMI_SKIP_CHECKPOINTS": {"type": "Literal", "literal": {"value": "true"}},
            "PULUMI_PARALLEL_DIFF": {"type": "Literal", "literal": {"value": "true"}},
        },
        "refresh": True,
        "continueResyncOnCommitMatch": True,
        "resyncFrequencySeconds": s.resync_seconds,
        "destroyOnFinalize": False,
        "serviceAccountName": s.service_account,
    }
    if s.repo_dir:
        spec["repoDir"] = s.repo_dir
    if s.backend:
        spec["backend"] = s.backend
    if after:
        spec["prerequisites"] = [
            {"name": name, "requirement": {"succeededWithinDuration": s.ring_window}}
            for name in after]
    if s.image:
        spec["workspaceTemplate"] = {"spec": {"image": s.image}}
    return {
        "apiVersion": API_VERSION, "kind": KIND,
        "metadata": {"name": stack.name, "namespace": s.namespace,
                     "labels": {RING_LABEL: str(stack.ring),
                                "app.kubernetes.io/part-of": "knative-fleet"}},
        "spec": spec,
    }

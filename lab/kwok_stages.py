"""The Stages kwok plays on the lab's clusters: kwok's defaults, except that a Knative
webhook pod is never made Ready by kwok. On a real spoke a webhook pod turns Ready when its
readiness probe reaches the webhook, so its Deployment is Available only once the webhook
answers; the lab's webhook host (lab.webhooks) marks the pod Ready when the local webhook
process it runs for it answers, and kwok only starts it (phase Running, a pod IP).

kwok uses the Stages a kwokctl config names instead of its defaults, all of them, so the
config names every default (copied from the pinned kwok module by toolchain/webhooks.sh)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import yaml

# The label Knative puts on its webhook pods: `role: webhook` (Serving) and
# `role: eventing-webhook` (Eventing), in every release since 1.0.
WEBHOOK_ROLE_LABEL = "role"
WEBHOOK_ROLES = ("webhook", "eventing-webhook")
DEFAULT_STAGE_FILES = (
    "node-initialize.yaml", "node-heartbeat-with-lease.yaml",
    "pod-ready.yaml", "pod-complete.yaml", "pod-delete.yaml",
)
WEBHOOK_POD_STAGE = "pod-webhook-started"


def _webhook_selector(operator: str) -> dict:
    return {"key": f".metadata.labels.{WEBHOOK_ROLE_LABEL}", "operator": operator,
            "values": list(WEBHOOK_ROLES)}


def webhook_pod_stage(pod_ready: dict) -> dict:
    """kwok's pod-ready for webhook pods, without readiness: Running with a pod IP, its
    Ready and ContainersReady conditions False and its containers not ready."""
    stage = copy.deepcopy(pod_ready)
    stage["metadata"]["name"] = WEBHOOK_POD_STAGE
    stage["spec"]["selector"]["matchExpressions"].append(_webhook_selector("In"))
    template = stage["spec"]["next"]["statusTemplate"]
    for condition in ("Ready", "ContainersReady"):
        template, found = re.subn(
            rf'status: "True"(\s+)type: {condition}\n', rf'status: "False"\1type: {condition}\n',
            template)
        if found != 1:
            raise ValueError(f"kwok's pod-ready no longer sets {condition} as expected")
    template, found = re.subn(r"(name: \{\{ \.name \| Quote \}\}\s+)ready: true",
                              r"\1ready: false", template, count=1)
    if found != 1:
        raise ValueError("kwok's pod-ready no longer sets container readiness as expected")
    stage["spec"]["next"]["statusTemplate"] = template
    return stage


def stage_documents(stage_dir: Path) -> list[dict]:
    """Every Stage of the lab's clusters: kwok's defaults from `stage_dir`, pod-ready
    leaving webhook pods out, and the webhook pod Stage."""
    docs: list[dict] = []
    for name in DEFAULT_STAGE_FILES:
        path = stage_dir / name
        if not path.exists():
            raise FileNotFoundError(
                f"kwok Stage {path} is missing: run toolchain/webhooks.sh (make toolchain)")
        docs.append(yaml.safe_load(path.read_text()))
    pod_ready = next(d for d in docs if d["metadata"]["name"] == "pod-ready")
    webhook = webhook_pod_stage(pod_ready)
    pod_ready["spec"]["selector"]["matchExpressions"].append(_webhook_selector("NotIn"))
    return [*docs, webhook]

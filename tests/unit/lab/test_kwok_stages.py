"""kwok plays a Knative webhook pod as started but not Ready (the lab's webhook host
makes it Ready when the webhook answers); every other pod as kwok's default does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lab.kwok_stages import DEFAULT_STAGE_FILES, WEBHOOK_POD_STAGE, stage_documents

POD_READY = """\
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.status.phase', operator: 'In', values: ['Pending']}
  next:
    statusTemplate: |
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
      {{ end }}
      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
      {{ end }}
      phase: Running
"""


@pytest.fixture
def stage_dir(tmp_path: Path) -> Path:
    for name in DEFAULT_STAGE_FILES:
        text = POD_READY if name == "pod-ready.yaml" else (
            f"kind: Stage\nmetadata: {{name: {name[:-5]}}}\nspec: {{}}\n")
        (tmp_path / name).write_text(text)
    return tmp_path


def by_name(docs: list[dict]) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs}


def test_every_default_stage_and_the_webhook_stage(stage_dir: Path) -> None:
    docs = by_name(stage_documents(stage_dir))
    assert set(docs) == {*(n[:-5] for n in DEFAULT_STAGE_FILES), WEBHOOK_POD_STAGE}


def test_webhook_pods_start_unready_and_others_become_ready(stage_dir: Path) -> None:
    docs = by_name(stage_documents(stage_dir))
    ready = docs["pod-ready"]["spec"]["selector"]["matchExpressions"][-1]
    webhook = docs[WEBHOOK_POD_STAGE]["spec"]["selector"]["matchExpressions"][-1]
    assert ready == {"key": ".metadata.labels.role", "operator": "NotIn",
                     "values": ["webhook", "eventing-webhook"]}
    assert webhook == dict(ready, operator="In")
    template = docs[WEBHOOK_POD_STAGE]["spec"]["next"]["statusTemplate"]
    status = yaml.safe_load(template.replace("{{ $now | Quote }}", "now").replace(
        "{{ range .spec.containers }}", "").replace("{{ range .spec.initContainers }}", "")
        .replace("{{ end }}", "").replace("{{ .image | Quote }}", "i")
        .replace("{{ .name | Quote }}", "n"))
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions == {"Initialized": "True", "Ready": "False", "ContainersReady": "False"}
    assert [c["ready"] for c in status["containerStatuses"]] == [False]
    assert [c["ready"] for c in status["initContainerStatuses"]] == [True]
    assert status["phase"] == "Running"
    # kwok's own pod-ready is untouched but for its selector.
    assert '"True"\n  type: Ready' in docs["pod-ready"]["spec"]["next"]["statusTemplate"]


def test_a_kwok_that_changed_its_pod_stage_is_named(stage_dir: Path) -> None:
    (stage_dir / "pod-ready.yaml").write_text(POD_READY.replace("type: Ready", "type: Up"))
    with pytest.raises(ValueError, match="no longer sets Ready"):
        stage_documents(stage_dir)


def test_a_missing_stage_file_says_how_to_build_it(stage_dir: Path) -> None:
    (stage_dir / "pod-delete.yaml").unlink()
    with pytest.raises(FileNotFoundError, match="toolchain/webhooks.sh"):
        stage_documents(stage_dir)

"""What `make demo` shows a person: counts per spoke, failures, then Pulumi's summary."""

from __future__ import annotations

from lab.progress import summarize

OUTPUT = """\
Updating (demo):
 +  pulumi:pulumi:Stack knative-fleet-demo creating (0s)
 +  kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-network creating (0s)
 +  kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-network created (0.41s)
 +  kubernetes:apps/v1:Deployment spoke-2:knative-serving/activator created (3.1s)
 ~  kubernetes:core/v1:ConfigMap spoke-2:knative-serving/config-defaults updated (0.2s)
 +  kubernetes:apps/v1:Deployment spoke-2:knative-serving/webhook creating failed error: boom
Diagnostics:
  kubernetes:apps/v1:Deployment (spoke-2:knative-serving/webhook):
    error: boom
Outputs:
    spokes: {}
Resources:
    + 3 created
Duration: 41s
"""


def test_counts_per_spoke_then_the_summary_verbatim() -> None:
    clock = iter(range(100))
    shown = list(summarize(OUTPUT.splitlines(keepends=True), now=lambda: next(clock) * 10.0))
    assert "  spoke-1: 1 created" in shown
    assert any(line.startswith("  spoke-2: ") and "1 failed" in line and "1 updated" in line
               for line in shown)
    assert any("webhook creating failed" in line for line in shown)
    tail = shown[shown.index("Diagnostics:"):]
    assert tail == OUTPUT.splitlines()[OUTPUT.splitlines().index("Diagnostics:"):]
    assert not any("creating (0s)" in line for line in shown)

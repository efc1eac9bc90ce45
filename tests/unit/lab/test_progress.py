"""What `make demo` shows a person: a line per spoke, failures, then Pulumi's summary
without its outputs, and the spokes' outputs one line each."""

from __future__ import annotations

from lab.progress import spoke_lines, summarize

OUTPUT = """\
Updating (demo):
 +  pulumi:pulumi:Stack knative-fleet-demo creating (0s)
 +  kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-network creating (0s)
 +  kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-network created (0.41s)
 +  kubernetes:apps/v1:Deployment spoke-2:knative-serving/activator created (3.1s)
 ~  kubernetes:core/v1:ConfigMap spoke-2:knative-serving/config-defaults updated (0.2s)
 +  knative-fleet:index:Spoke spoke-1 created (95s)
 +  kubernetes:apps/v1:Deployment spoke-2:knative-serving/webhook creating failed error: boom
Diagnostics:
  kubernetes:apps/v1:Deployment (spoke-2:knative-serving/webhook):
    error: boom
Outputs:
    spokes: {
        spoke-1: {}
    }
Resources:
    + 3 created
Duration: 41s
"""


def test_a_line_per_spoke_then_the_summary_without_outputs() -> None:
    shown = list(summarize(OUTPUT.splitlines(keepends=True)))
    assert "  spoke-1: 1 created in 95s" in shown
    assert sum(line.startswith("  spoke-1:") for line in shown) == 1
    assert any(line.startswith("  spoke-2: ") and "1 failed" in line and "1 updated" in line
               for line in shown)
    assert any("webhook creating failed" in line for line in shown)
    tail = shown[shown.index("Diagnostics:"):]
    assert tail == ["Diagnostics:", "  kubernetes:apps/v1:Deployment "
                    "(spoke-2:knative-serving/webhook):", "    error: boom",
                    "Resources:", "    + 3 created", "Duration: 41s"]
    assert not any("creating (0s)" in line for line in shown)


def test_the_spokes_output_one_line_each() -> None:
    lines = list(spoke_lines({
        "spoke-2": {"ready": False, "targetClusterResolved": {
            "status": "False", "reason": "ClusterProfileNotFound"}},
        "spoke-1": {"ready": True, "serving": "1.23.0", "eventing": "1.23.0",
                    "server": "https://127.0.0.1:6443",
                    "targetClusterResolved": {"status": "True", "reason": "Resolved"}}}))
    assert lines == [
        "  spoke-1: ready serving 1.23.0 eventing 1.23.0 TargetClusterResolved=True "
        "https://127.0.0.1:6443",
        "  spoke-2: NOT ready TargetClusterResolved=False (ClusterProfileNotFound)"]


# Pulumi's own lines (cut here to fit the line length; Pulumi prints each on one line).
DENIED = ('admission webhook "config.webhook.serving.knative.dev" denied the request: '
          "validation failed: target concurrency of -3.5, can't be less than 0.01")
REFUSED = "\n".join([
    "Updating (demo):",
    " ~  kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-autoscaler "
    "**updating failed** [diff: ~data]; error: 1 error occurred:",
    " ~  kubernetes:core/v1:ConfigMap spoke-2:knative-serving/config-autoscaler updated "
    "(0.2s) [diff: ~data]",
    "Diagnostics:",
    "  kubernetes:core/v1:ConfigMap (spoke-1:knative-serving/config-autoscaler):",
    "    error: 1 error occurred:",
    '    \t* the Kubernetes API server reported that "knative-serving/config-autoscaler" '
    "failed to fully initialize or become live: " + DENIED,
    "",
    "  pulumi:pulumi:Stack (knative-fleet-demo):",
    "    error: Program failed with an unhandled exception:",
    "Outputs:",
    "    spokes: {}",
    "Resources:",
    "    ~ 1 updated",
    ""])


def test_a_refusal_by_knative_s_webhook_names_the_spoke_object_and_knative_s_words() -> None:
    shown = list(summarize(REFUSED.splitlines(keepends=True)))
    at = shown.index("Refused on the spokes (a value a webhook refused: fix it in the "
                     "stack's config, then run again):")
    assert shown[at + 1] == (
        "  spoke-1: knative-serving/config-autoscaler refused by Knative's webhook "
        "config.webhook.serving.knative.dev: validation failed: target concurrency of -3.5, "
        "can't be less than 0.01")
    assert not any(line.startswith("  spoke-2: knative-serving") for line in shown)
    assert shown.index("Resources:") > at


def test_a_webhook_that_did_not_answer_says_to_run_again() -> None:
    lines = ["Diagnostics:",
             "  kubernetes:core/v1:ConfigMap (spoke-1:knative-serving/config-domain):",
             '    * creation failed: Internal error occurred: failed calling webhook '
             '"config.webhook.serving.knative.dev": failed to call webhook: no endpoints',
             "Resources:"]
    shown = list(summarize(lines))
    assert ("  spoke-1: knative-serving/config-domain refused: Knative's webhook "
            "config.webhook.serving.knative.dev did not answer (failed to call webhook: no "
            "endpoints); run again once its Deployment is Available") in shown

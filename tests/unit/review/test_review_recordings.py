"""The review of each preview recorded on the lab (tests/support/previews/): the
lines a reviewer reads first say what that change really does."""

from __future__ import annotations

import functools
import json

import pytest

from lab.paths import REPO
from review.markdown import LIMIT, render
from review.preview import load
from review.report import to_json
from review.summary import Summary, summarise

PREVIEWS = REPO / "tests" / "support" / "previews"


@functools.cache
def reviewed(name: str) -> tuple[Summary, str, dict]:
    """Each recording is loaded and summarised once per test session."""
    got = load(PREVIEWS / f"{name}.json.gz")
    summary = summarise(got.document, got.exit_code, "demo")
    report = to_json(summary)
    json.dumps(report)  # serialisable
    return summary, render(summary), report


def human_part(markdown: str) -> str:
    return markdown.split("### Spokes")[0]


def test_upgrade_shows_the_version_steps_and_the_crd_changes() -> None:
    summary, md, report = reviewed("upgrade")
    rows = [line for line in md.splitlines() if line.startswith("| spoke-")]
    assert len(rows) == 2
    for row in rows:
        assert "| 1.22.1 -> 1.23.0 | 1.22.2 -> 1.23.0 | 3 | 212 | 0 | 3 |" in row
    human = human_part(md)
    assert "**CRD changes**" in human and "**spoke-1, spoke-2**: 30 CRD(s) updated" in human
    assert "Serving 1.22.1 -> 1.23.0 (upgrade)" in human
    assert "Job knative-serving/cleanup-serving-serving-1.22.1" in human  # the deletes
    # every change is the same on both spokes, so it is shown once
    assert "#### The same on 2 spokes: spoke-1, spoke-2" in md
    assert "#### spoke-1\n" not in md and "#### spoke-2\n" not in md
    assert '+ spec.template.spec.containers[0].image: "gcr.io/knative-releases/' in md
    assert len(md) < LIMIT
    assert report["totals"] == {"created": 6, "updated": 424, "replaced": 0, "deleted": 6,
                                "same": 46}
    assert [s["serving"] for s in report["spokes"]] == \
        [{"before": "1.22.1", "after": "1.23.0", "step": "upgrade"}] * 2


def test_removed_spoke_lists_its_deletes() -> None:
    summary, md, report = reviewed("removed-spoke")
    human = human_part(md)
    assert "**Deletes**" in human
    # Its typed CRDs are kept on delete (the default): they leave the state, not the spoke.
    assert "**spoke-2**: 207 deleted (the spoke is uninstalled: all its resources)" in human
    assert "`Deployment knative-serving/activator`" in human
    assert "**Namespace deletions**" in human and "CRD(s) deleted" not in human
    assert ("30 typed CRD resource(s) leave the state; the CRDs stay on the spoke" in human)
    assert "| spoke-2 (removed) | — | 1.22.1 -> none | 1.22.2 -> none | 0 | 0 | 0 | 237 |" in md
    assert summary.unchanged == ["spoke-1"]
    assert report["spokes"][0]["removed"] is True


def test_unreachable_spoke_is_named_with_its_reason() -> None:
    summary, md, report = reviewed("unreachable")
    assert not summary.ok and summary.exit_code == 1
    human = human_part(md)
    assert "**The preview failed** (exit code 1)" in md
    assert "**Unreachable spokes**" in human
    assert ("**spoke-9**: ClusterProfileNotFound: ClusterProfile fleet-system/no-such-profile "
            "not found on the hub; left untouched. Fix: check the fleet entry's") in human
    assert "wave 'all' stopped the rollout" in human
    assert "program exited with non-zero exit code" not in md
    assert report["unresolved"][0]["spoke"] == "spoke-9"
    assert report["unresolved"][0]["reason"] == "ClusterProfileNotFound"
    assert [s["name"] for s in report["spokes"]] == ["spoke-9"]


def test_config_change_shows_the_field_diff_on_spoke_1_only() -> None:
    summary, md, report = reviewed("config-change")
    assert '+ data.domain-template: "{{.Name}}.{{.Namespace}}.example"' in md
    assert "#### spoke-1\n" in md and "spoke-2 |" not in md
    assert "**Needs a human:** nothing" in md
    assert [s.name for s in summary.spokes] == ["spoke-1"]
    assert report["spokes"][0]["objects"][0]["fields"] == [
        {"path": "data.domain-template", "kind": "add",
         "new": "{{.Name}}.{{.Namespace}}.example"}]


def test_noop_says_so_in_one_line() -> None:
    summary, md, report = reviewed("noop")
    assert md.count("\n") == 1 and "no changes" in md and "476 resources unchanged" in md
    assert report["noop"] is True and report["needsHuman"] == []


def test_new_spoke_is_created_with_its_object_count() -> None:
    summary, md, report = reviewed("new-spoke")
    assert "| spoke-2 (new) | — | none -> 1.22.1 | none -> 1.22.2 | 237 | 0 | 0 | 0 |" in md
    assert "Serving none -> 1.22.1 (install)" in human_part(md)
    assert "**created** 237: 55 ClusterRole" in md.replace("<b>", "**").replace("</b>", "**")
    assert '+ spokes.spoke-2: {"group": "", "profile": "fleet-system/spoke-2"}' in md
    assert report["spokes"][0]["added"] is True


@pytest.mark.parametrize("name", ["new-spoke", "removed-spoke", "upgrade", "config-change",
                                  "unreachable", "noop"])
def test_no_secret_reaches_the_report(name: str) -> None:
    _, md, report = reviewed(name)
    for obj in [o for s in report["spokes"] for o in s["objects"]]:
        if obj["kind"] == "Secret":
            for f in obj["fields"]:
                if f["path"].startswith(("data", "stringData")):
                    assert {f.get("old"), f.get("new")} <= {"[secret]"}
    assert "kubeconfig" not in md


def test_the_wave_of_a_new_spoke_comes_from_the_programs_info_line() -> None:
    got = load(PREVIEWS / "new-spoke.json.gz")
    doc = dict(got.document)
    doc["diagnostics"] = [*(doc.get("diagnostics") or []), {
        "urn": "urn:pulumi:demo::knative-fleet::knative-fleet:index:Spoke::spoke-2",
        "message": "wave 'canary' (1 of the rollout)\n", "severity": "info"}]
    summary = summarise(doc, 0, "demo")
    assert [(s.name, s.wave) for s in summary.spokes] == [("spoke-2", "canary")]
    assert "| spoke-2 (new) | canary |" in render(summary)

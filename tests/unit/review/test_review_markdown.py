"""The Markdown comment on synthetic previews: one change on many spokes is shown once,
and a huge preview stays under GitHub's comment limit with its "needs a human" part."""

from __future__ import annotations

from typing import Any

from review.markdown import LIMIT, render
from review.summary import summarise

STACK = "urn:pulumi:demo::knative-fleet::pulumi:pulumi:Stack::knative-fleet-demo"


def k8s_step(op: str, spoke: str, kind: str, name: str, old: dict | None,
             new: dict | None, group: str = "core/v1") -> dict[str, Any]:
    type_ = f"kubernetes:{group}:{kind}"
    urn = f"urn:pulumi:demo::knative-fleet::knative-fleet:index:Spoke${type_}::{spoke}:{name}"

    def state(data: dict | None) -> dict | None:
        if data is None:
            return None
        labels = {"app.kubernetes.io/name": "knative-serving",
                  "app.kubernetes.io/version": data.pop("version", "1.22.1")}
        return {"type": type_, "inputs": {"metadata": {"labels": labels}, **data}}

    return {"op": op, "urn": urn, "oldState": state(old), "newState": state(new),
            "detailedDiff": None}


def stack_step(spokes: list[str]) -> dict[str, Any]:
    outputs = {"spokes": {s: {"serving": "1.22.1", "wave": "canary" if s == "spoke-1"
                              else "rest"} for s in spokes}}
    return {"op": "same", "urn": STACK,
            "oldState": {"type": "pulumi:pulumi:Stack", "outputs": outputs},
            "newState": {"type": "pulumi:pulumi:Stack"}}


def test_the_same_change_on_many_spokes_is_shown_once() -> None:
    spokes = ["spoke-1", "spoke-2", "spoke-10"]
    steps = [stack_step(spokes)]
    for spoke in spokes:
        new = "b" if spoke != "spoke-10" else "c"
        steps.append(k8s_step("update", spoke, "ConfigMap", "knative-serving/config-gc",
                              {"data": {"x": "a"}}, {"data": {"x": new}}))
    md = render(summarise({"steps": steps}, 0, "demo"))
    assert md.count('+ data.x: "b"') == 1 and md.count('+ data.x: "c"') == 1
    assert "#### The same on 2 spokes: spoke-1, spoke-2\n" in md
    assert "#### spoke-10\n" in md
    assert md.index("spoke-2 |") < md.index("spoke-10 |")  # natural order
    assert "| spoke-1 | canary | 1.22.1 | " in md


def test_objects_with_the_same_diff_are_listed_under_one_diff() -> None:
    steps = [stack_step(["spoke-1"])]
    for i in range(5):
        steps.append(k8s_step("update", "spoke-1", "ClusterRole", f"role-{i}",
                              {}, {"version": "1.23.0"}, "rbac.authorization.k8s.io/v1"))
    md = render(summarise({"steps": steps}, 0, "demo"))
    assert md.count('+ metadata.labels["app.kubernetes.io/version"]: "1.23.0"') == 1
    assert "<b>updated</b> 5 objects with the same diff: 5 ClusterRole" in md
    assert "Serving 1.22.1 -> 1.23.0 (upgrade)" in md


def huge_preview(spokes: int, objects: int) -> dict[str, Any]:
    names = [f"spoke-{i}" for i in range(spokes)]
    steps = [stack_step(names)]
    text = "\n".join(f"line {n}" for n in range(60))
    for spoke in names:
        for i in range(objects):  # a different long diff on every object of every spoke
            steps.append(k8s_step("update", spoke, "ConfigMap", f"knative-serving/cm-{i}",
                                  {"data": {"big": text, "key": "x" * 400}},
                                  {"data": {"big": text.replace("line 3", spoke),
                                            "key": spoke * 100}}))
        steps.append(k8s_step("delete", spoke, "Namespace", f"ns-{spoke}", {}, None))
        steps.append(k8s_step("update", spoke, "CustomResourceDefinition", "a.knative.dev",
                              {"spec": {"v": 1}}, {"spec": {"v": 2}},
                              "apiextensions.k8s.io/v1"))
    return {"steps": steps}


def test_a_huge_preview_fits_a_comment_and_keeps_the_human_part() -> None:
    summary = summarise(huge_preview(spokes=40, objects=15), 0, "demo")
    md = render(summary)
    assert len(md) <= LIMIT
    assert len(summary.needs_human) == 40 * 3  # per spoke: delete, namespace, CRD
    for spoke in (s.name for s in summary.spokes):
        assert f"- **{spoke}**: 1 deleted: `Namespace ns-{spoke}`" in md
    assert "spoke-29 and 10 more**: 1 CRD(s) updated" in md  # once, with its spokes


def test_a_preview_too_big_for_any_detail_is_cut_with_a_note() -> None:
    summary = summarise(huge_preview(spokes=400, objects=2), 0, "demo")
    md = render(summary)
    assert len(md) <= LIMIT
    assert "the report is cut here to fit a GitHub comment" in md
    assert "### Needs a human" in md and "- **spoke-399**: 1 deleted" in md

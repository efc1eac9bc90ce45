"""The summary as JSON for tools (`report.json`); the keys are stable.

    schema        "knative-fleet-review/1"
    stack         the stack name, or null
    ok            the preview succeeded (exitCode 0)
    exitCode      pulumi's exit code
    noop          nothing changes and nothing needs a human
    totals        {created, updated, replaced, deleted, same}: resources
    needsHuman    [{category, spoke, text, objects}]: category is one of errors,
                  unresolved, deletes, replaces, namespaces, crds, versions, approvals;
                  spoke is null for the fleet; objects are `Kind name` labels (CRD and
                  namespace names for crds and namespaces; the wave's spokes for
                  approvals)
    spokes        [{name, wave, added, removed, unresolved, serving, eventing, counts,
                  objects}], changed or unreachable spokes in name order:
                  serving/eventing {before, after, step}: versions, null when not
                  installed; step is null (unchanged), install, uninstall, patch,
                  upgrade, downgrade, change or "skips a minor version (...)";
                  counts {created, updated, replaced, deleted};
                  unresolved null or {spoke, reason, message, fix}
    fleet         [object]: changes of fleet-level resources (membership, wave gates,
                  approval gates)
    unresolved    [{spoke, reason, message, fix}]: spokes that could not be resolved
    errors        [string]: error diagnostics that name no spoke
    warnings      [string]
    unchanged     [string]: spokes of the last run this preview does not change

    object        {op, kind, type, name, urn, replaceReasons, fields}: op is created,
                  updated, replaced or deleted; name is without the spoke prefix
    field         {path, kind, old, new}: path in Pulumi's syntax; kind add, delete or
                  update ("-replace" appended when it forces a replacement); old is
                  absent for add, new for delete; Secret data is "[secret]"
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from review.fields import FieldChange
from review.summary import ObjectChange, SpokeSummary, Summary
from review.versions import VersionChange

SCHEMA = "knative-fleet-review/1"


def field_json(change: FieldChange) -> dict[str, Any]:
    out: dict[str, Any] = {"path": change.path, "kind": change.kind}
    if not change.kind.startswith("add"):
        out["old"] = change.old
    if not change.kind.startswith("delete"):
        out["new"] = change.new
    return out


def object_json(change: ObjectChange) -> dict[str, Any]:
    r = change.resource
    return {"op": change.op, "kind": r.kind, "type": r.type, "name": r.name, "urn": r.urn,
            "replaceReasons": list(change.replace_reasons),
            "fields": [field_json(f) for f in change.fields]}


def version_json(v: VersionChange) -> dict[str, Any]:
    return {"before": v.before, "after": v.after, "step": v.step()}


def spoke_json(s: SpokeSummary) -> dict[str, Any]:
    return {"name": s.name, "wave": s.wave, "added": s.added, "removed": s.removed,
            "unresolved": asdict(s.unresolved) if s.unresolved else None,
            "serving": version_json(s.serving), "eventing": version_json(s.eventing),
            "counts": s.counts, "objects": [object_json(o) for o in s.objects]}


def to_json(summary: Summary) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "stack": summary.stack,
        "ok": summary.ok,
        "exitCode": summary.exit_code,
        "noop": summary.noop,
        "totals": {**summary.totals, "same": summary.same},
        "needsHuman": [{**asdict(p), "objects": list(p.objects)}
                       for p in summary.needs_human],
        "spokes": [spoke_json(s) for s in summary.spokes],
        "fleet": [object_json(o) for o in summary.fleet],
        "unresolved": [asdict(u) for u in summary.unresolved],
        "errors": list(summary.errors),
        "warnings": list(summary.warnings),
        "unchanged": list(summary.unchanged),
    }

"""The review as a Markdown PR comment.

On top what needs a human (deletes, replaces, CRD and namespace changes, unreachable
spokes, version steps), then one table row per changed spoke, then the changed objects
with their field diffs. A change that is the same on several spokes (same object, same
diff) is shown once with the list of spokes, and objects with the same diff are listed
under one diff. GitHub refuses comments over 65,536 characters: the object details are
written shorter and shorter until the report fits, then cut with a note; the "needs a
human" part is always kept whole.
"""

from __future__ import annotations

import difflib
import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from review.fields import FieldChange
from review.summary import CATEGORIES, COUNTS, ObjectChange, Problem, Summary, natural
from review.versions import VersionChange

LIMIT = 65_536
FOLD_LINES = 8  # a diff longer than this is folded in <details>
INLINE_OBJECTS = 8  # longer object lists are folded in <details>


@dataclass(frozen=True)
class Detail:
    """How much of every object change is written."""

    value_chars: int | None  # None: field paths only, no values
    text_lines: int  # lines of a multi-line value's diff
    fields: int  # field lines per object
    names: int  # object names per list
    objects: bool = True  # False: per group only counts


LEVELS = (
    Detail(value_chars=240, text_lines=40, fields=40, names=300),
    Detail(value_chars=80, text_lines=8, fields=8, names=60),
    Detail(value_chars=None, text_lines=0, fields=5, names=20),
    Detail(value_chars=None, text_lines=0, fields=0, names=0, objects=False),
)


def spokes_text(spokes: list[str], limit: int = 30) -> str:
    shown = ", ".join(spokes[:limit])
    return shown + (f" and {len(spokes) - limit} more" if len(spokes) > limit else "")


def version_text(v: VersionChange) -> str:
    if not v.changed:
        return v.before or "none"
    return f"{v.before or 'none'} -> {v.after or 'none'}"


def _code(text: str) -> str:
    return f"`{text.replace('`', chr(0x2018))}`"


def _value(value: Any, chars: int) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= chars else text[:chars - 1] + "…"


def _is_text(change: FieldChange) -> bool:
    return (isinstance(change.old, str) and isinstance(change.new, str)
            and ("\n" in change.old or "\n" in change.new))


def field_lines(change: FieldChange, detail: Detail) -> list[str]:
    """`- path: old` / `+ path: new`; a multi-line value as a unified diff."""
    note = "  # forces a replacement" if change.kind.endswith("-replace") else ""
    if detail.value_chars is None:
        return [f"~ {change.path} ({change.kind}){note}"]
    chars = detail.value_chars
    if change.kind.startswith("add"):
        return [f"+ {change.path}: {_value(change.new, chars)}{note}"]
    if change.kind.startswith("delete"):
        return [f"- {change.path}: {_value(change.old, chars)}{note}"]
    if change.old is None and change.new is None:
        return [f"! {change.path}: differs from the live object ({change.kind}){note}"]
    if _is_text(change):
        body = list(difflib.unified_diff(change.old.splitlines(), change.new.splitlines(),
                                         lineterm="", n=1))[2:]
        cut = [line[:chars] for line in body[:detail.text_lines]]
        if len(body) > len(cut):
            cut.append(f"  … {len(body) - len(cut)} more lines")
        return [f"@@ {change.path}{note} @@", *cut]
    return [f"- {change.path}: {_value(change.old, chars)}{note}",
            f"+ {change.path}: {_value(change.new, chars)}"]


def _diff_block(fields: tuple[FieldChange, ...], detail: Detail) -> list[str]:
    lines: list[str] = []
    for f in fields[:detail.fields]:
        lines += field_lines(f, detail)
    if len(fields) > detail.fields:
        lines.append(f"  … {len(fields) - detail.fields} more fields (report.json)")
    return ["```diff", *(line.replace("```", "ʼʼʼ") for line in lines), "```"] if lines else []


def _names(labels: list[str], limit: int) -> list[str]:
    out = [f"- {_code(label)}" for label in labels[:limit]]
    if len(labels) > limit:
        out.append(f"- … {len(labels) - limit} more (report.json)")
    return out


def _html(text: str) -> str:
    """Markdown `**bold**` and `code` as HTML: <summary> does not render Markdown."""
    text = html.escape(text, quote=False)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", text)


def _fold(summary: str, body: list[str], fold: bool) -> list[str]:
    if not fold or not body:
        return [summary, *([""] + body if body else [])]
    return [f"<details><summary>{_html(summary)}</summary>", "", *body, "", "</details>"]


def _kinds(labels: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for label in labels:
        kind = label.split(" ", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]))


# --- needs a human --------------------------------------------------------------------------

def _grouped_problems(problems: list[Problem]) -> list[tuple[Problem, list[str]]]:
    """The same problem on several spokes, once, with its spokes."""
    groups: dict[tuple, tuple[Problem, list[str]]] = {}
    for p in problems:
        key = (p.category, p.text, p.objects)
        groups.setdefault(key, (p, []))[1].append(p.spoke or "")
    return list(groups.values())


def needs_human(summary: Summary, names: int = 300) -> list[str]:
    """Never shortened but for the object names under an item (kept in report.json)."""
    if not summary.needs_human:
        return ["**Needs a human:** nothing: no deletes, replaces, CRD or namespace changes, "
                "unreachable spokes or version steps.", ""]
    out = ["### Needs a human", ""]
    for category, title in CATEGORIES.items():
        groups = [g for g in _grouped_problems(summary.needs_human) if g[0].category == category]
        if not groups:
            continue
        out.append(f"**{title}**")
        out.append("")
        for problem, spokes in groups:
            where = spokes_text([s for s in spokes if s]) or "fleet"
            line = f"- **{where}**: {problem.text}"
            objects = list(problem.objects)
            if objects and all(" " in o for o in objects) and len(objects) > INLINE_OBJECTS:
                line += f": {_kinds(objects)}"
            if objects and len(objects) <= INLINE_OBJECTS:
                out.append(line + ": " + ", ".join(_code(o) for o in objects))
            elif objects:
                out.append(line)
                if names:
                    listed = [f"  {n}" for n in _names(objects, names)]
                    out += ["  <details><summary>the objects</summary>", "", *listed, "",
                            "  </details>"]
            else:
                out.append(line)
        out.append("")
    return out


# --- the table ------------------------------------------------------------------------------

def table(summary: Summary) -> list[str]:
    rows = ["| spoke | wave | Serving | Eventing | created | updated | replaced | deleted |",
            "|---|---|---|---|---:|---:|---:|---:|"]
    for s in summary.spokes:
        name = s.name + (" (new)" if s.added else " (removed)" if s.removed else "")
        if s.unresolved:
            name += f" (unreachable: {s.unresolved.reason}, untouched)"
        counts = s.counts
        rows.append(f"| {name} | {s.wave or '—'} | {version_text(s.serving)} | "
                    f"{version_text(s.eventing)} | "
                    + " | ".join(str(counts[op]) for op in COUNTS) + " |")
    if summary.fleet:
        counts = {op: sum(1 for o in summary.fleet if o.op == op) for op in COUNTS}
        rows.append("| (fleet) | — | — | — | " + " | ".join(str(counts[op]) for op in COUNTS)
                    + " |")
    return rows


# --- the object details ---------------------------------------------------------------------

def fingerprint(fields: tuple[FieldChange, ...]) -> str:
    """Field changes as a hashable value: equal exactly when the diffs are equal."""
    return json.dumps([[f.path, f.kind, f.old, f.new] for f in fields], sort_keys=True,
                      default=str)


def _key(change: ObjectChange) -> tuple:
    return (change.op, change.resource.type, change.resource.name,
            fingerprint(change.fields), change.replace_reasons)


def change_groups(summary: Summary) -> list[tuple[list[str], list[ObjectChange]]]:
    """(spokes, changes): every distinct change once, under the exact set of spokes it
    happens on; fleet-level changes under the empty set, first."""
    spokes_of: dict[tuple, list[str]] = {}
    first: dict[tuple, ObjectChange] = {}
    for change in summary.fleet:
        spokes_of.setdefault(_key(change), [])
        first.setdefault(_key(change), change)
    for spoke in summary.spokes:
        for change in spoke.objects:
            spokes_of.setdefault(_key(change), []).append(spoke.name)
            first.setdefault(_key(change), change)
    sections: dict[tuple[str, ...], list[ObjectChange]] = {}
    for key, spokes in spokes_of.items():
        sections.setdefault(tuple(spokes), []).append(first[key])
    order = sorted(sections, key=lambda s: (len(s) > 0, [natural(n) for n in s]))
    return [(list(s), sections[s]) for s in order]


def _object_blocks(changes: list[ObjectChange], detail: Detail) -> list[list[str]]:
    """Created and deleted objects as lists; updated and replaced objects with the same
    diff under one diff."""
    blocks: list[list[str]] = []
    for op in ("deleted", "replaced", "created"):
        labels = [c.label for c in changes if c.op == op and not c.fields]
        if labels:
            head = f"**{op}** {len(labels)}: {_kinds(labels)}"
            blocks.append(_fold(head, _names(labels, detail.names),
                                len(labels) > INLINE_OBJECTS) if detail.names else [head])
    same: dict[tuple, list[ObjectChange]] = {}
    for c in changes:
        if c.fields or c.op in ("updated",):
            same.setdefault((c.op, fingerprint(c.fields), c.replace_reasons), []).append(c)
    for (op, _, reasons), group in same.items():
        fields = group[0].fields
        why = f" (replaced because of {', '.join(reasons)})" if reasons else ""
        diff = _diff_block(fields, detail) if detail.fields else []
        if not fields:
            diff = ["(no input changes: the engine found a difference in the live object)"]
        if len(group) == 1:
            head = f"**{op}** {_code(group[0].resource.label)}{why}"
            blocks.append(_fold(head, diff, len(diff) > FOLD_LINES))
            continue
        labels = [c.resource.label for c in group]
        head = f"**{op}** {len(group)} objects with the same diff{why}: {_kinds(labels)}"
        names = _names(labels, detail.names) if detail.names else []
        blocks.append(_fold(head, [*diff, "", *names] if diff else names,
                            len(diff) + len(names) > FOLD_LINES))
    return blocks


def section(spokes: list[str], changes: list[ObjectChange], detail: Detail) -> list[str]:
    counts = ", ".join(f"{n} {op}" for op in COUNTS
                       if (n := sum(1 for c in changes if c.op == op)))
    if not spokes:
        title = "#### Fleet"
    elif len(spokes) == 1:
        title = f"#### {spokes[0]}"
    else:
        title = f"#### The same on {len(spokes)} spokes: {spokes_text(spokes)}"
    out = [title, "", counts, ""]
    if detail.objects:
        for block in _object_blocks(changes, detail):
            out += [*block, ""]
    return out


# --- the report -----------------------------------------------------------------------------

def _header(summary: Summary) -> list[str]:
    stack = f" `{summary.stack}`" if summary.stack else ""
    totals = summary.totals
    out = [f"## knative-fleet preview{stack}", ""]
    if not summary.ok:
        out += [f"**The preview failed** (exit code {summary.exit_code}): `pulumi up` would "
                "fail with the errors below.", ""]
    changed = [s.name for s in summary.spokes if any(s.counts.values())]
    line = (f"{len(changed)} spoke(s) change: "
            + ", ".join(f"{totals[op]} {op}" for op in COUNTS)
            + f"; {summary.same} resources unchanged.")
    if summary.unchanged:
        line += f" Unchanged spokes: {spokes_text(summary.unchanged)}."
    return [*out, line, ""]


def render(summary: Summary, limit: int = LIMIT) -> str:
    """The whole comment, at most `limit` characters, the "needs a human" part kept."""
    if summary.noop:
        stack = f" `{summary.stack}`" if summary.stack else ""
        return (f"**knative-fleet preview{stack}: no changes** ({summary.same} resources "
                "unchanged).\n")
    top = [*_header(summary), *needs_human(summary)]
    if len("\n".join(top)) > limit // 2:
        top = [*_header(summary), *needs_human(summary, names=0)]
    rows = table(summary)
    groups = change_groups(summary)
    for detail in LEVELS:
        sections = [section(spokes, changes, detail) for spokes, changes in groups]
        text = _join(top, rows, sections)
        if len(text) <= limit:
            return text
    return _cut(top, rows, sections, limit)


def _join(top: list[str], rows: list[str], sections: list[list[str]]) -> str:
    lines = [*top, "### Spokes", "", *rows, ""]
    if sections:
        lines += ["### Changes", "", *(line for s in sections for line in s)]
    return "\n".join(lines).rstrip() + "\n"


def _cut(top: list[str], rows: list[str], sections: list[list[str]], limit: int) -> str:
    """The top whole, then as many table rows and sections as fit, and a note."""
    note = ("\n_… the report is cut here to fit a GitHub comment ({} more {}); every "
            "change is in report.json and `pulumi preview --diff`._\n")
    head = "\n".join(top) + "\n"
    room = limit - len(head) - len(note) - 40
    kept_rows = rows[:2]
    for row in rows[2:]:
        if len("\n".join(kept_rows)) + len(row) + 1 > room * 2 // 3:
            break
        kept_rows.append(row)
    if len(kept_rows) < len(rows):
        text = "\n".join([head, "### Spokes", "", *kept_rows])
        return text[:limit - len(note) - 20] + note.format(len(rows) - len(kept_rows),
                                                           "spoke rows")
    body = _join([], kept_rows, [])
    kept = 0
    for s in sections:
        extra = ("### Changes\n\n" if not kept else "") + "\n".join(s) + "\n"
        if len(head) + len(body) + len(extra) + len(note) + 40 > limit:
            break
        body += extra
        kept += 1
    return (head + body).rstrip() + "\n" + note.format(len(sections) - kept, "sections")

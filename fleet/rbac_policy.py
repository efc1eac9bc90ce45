"""What RBAC cannot say about the spoke identity, as a ValidatingAdmissionPolicy derived
from the same plans as its ClusterRole (fleet.rights), matched to that identity alone:

- a role or binding it creates or changes must be one the release ships, by kind,
  namespace and name (the ClusterRole names them too, but RBAC names are the same in
  every namespace), with the release's own rules or aggregation rule, or its own role
  reference and subjects (RBAC's `escalate` and `bind` let it write any rules into, or
  bind, a role the release names);
- an object it writes or deletes in a namespace must be of a kind the release puts in
  that namespace (its ClusterRole holds every verb it needs in every namespace, and a
  Deployment or a token Secret elsewhere would run as, or read, another namespace's
  ServiceAccounts), or one of knative-fleet's own objects (fleet.rights.OWN_OBJECTS);
  a namespace it writes must be one the release creates.

An aggregated role's rules are the aggregation controller's: the identity may leave them
as they are or empty them, never write its own. The release data is inlined in the
policy's CEL (no parameter object the identity could edit); the policy and its binding
are objects the identity holds no right on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from fleet.rights import OWN_OBJECTS, RBAC_GROUP, api_group, resource_of

POLICY_GROUP = "admissionregistration.k8s.io"
PART_OF = {"app.kubernetes.io/part-of": "knative-fleet"}
RBAC_KINDS = ("ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding")
RULE_FIELDS = ("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs")
# The size of one part of the release map in the policy's CEL; the parser takes an
# expression of at most 100,000 code points.
CHUNK_CHARS = 50_000
# The subject kinds the API server gives the RBAC group when a binding leaves it out.
GROUP_DEFAULTED = ("User", "Group")

# The same body check for one release entry `e`, against the object as written. A
# ClusterRole without rules comes as `rules: null` (the field has no omitempty).
_MATCHES_ENTRY = (
    "has(e.aggregationRule)"
    " ? (has(object.aggregationRule) && dyn(object.aggregationRule) == e.aggregationRule"
    " && (size(variables.rules) == 0"
    " || (oldObject != null && dyn(variables.rules) == dyn(variables.oldRules))))"
    " : has(e.roleRef)"
    " ? (dyn(object.roleRef) == e.roleRef"
    " && dyn(has(object.subjects) && object.subjects != null ? object.subjects : [])"
    " == e.subjects)"
    " : (!has(object.aggregationRule) && dyn(variables.rules) == e.rules)"
)


def _pruned(value: Any) -> Any:
    """The value as the API server returns it: empty and unset fields left out
    (`omitempty`), list items kept in their order."""
    if isinstance(value, Mapping):
        kept = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _subject(subject: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(_pruned(subject))
    if out.get("kind") in GROUP_DEFAULTED:
        out.setdefault("apiGroup", RBAC_GROUP)
    return out


def rbac_key(obj: Mapping[str, Any]) -> str:
    """`Kind/namespace/name`, as the policy builds it from an admission request."""
    meta = obj["metadata"]
    return f"{obj['kind']}/{meta.get('namespace') or ''}/{meta['name']}"


def rbac_body(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What the policy holds an object of this name to: a role's rules (or its
    aggregation rule), a binding's role reference and subjects."""
    if obj["kind"] in ("ClusterRole", "Role"):
        if obj.get("aggregationRule"):
            return {"aggregationRule": _pruned(obj["aggregationRule"])}
        rules = [{k: r[k] for k in RULE_FIELDS if r.get(k)} for r in obj.get("rules") or []]
        return {"rules": rules}
    return {"roleRef": _pruned(obj["roleRef"]),
            "subjects": [_subject(s) for s in obj.get("subjects") or []]}


def release_rbac(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """{`Kind/namespace/name`: every body the plans give that role or binding}: one, or
    one per release when the stack's specs hold several versions."""
    bodies: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        if api_group(obj) != RBAC_GROUP or obj["kind"] not in RBAC_KINDS:
            continue
        seen = bodies.setdefault(rbac_key(obj), [])
        body = rbac_body(obj)
        if body not in seen:
            seen.append(body)
    return dict(sorted(bodies.items()))


def release_chunks(release: Mapping[str, list[dict[str, Any]]],
                   limit: int = CHUNK_CHARS) -> list[dict[str, list[dict[str, Any]]]]:
    """The release map in parts whose CEL literal stays under `limit` characters each (a
    CEL expression holds at most 100,000): one policy variable each."""
    chunks: list[dict[str, list[dict[str, Any]]]] = [{}]
    size = 0
    for key, bodies in release.items():
        entry = len(cel({key: bodies})) + len("dyn(), ")  # as a member of a larger map
        if chunks[-1] and size + entry > limit:
            chunks.append({})
            size = 0
        chunks[-1][key] = bodies
        size += entry
    return chunks


def write_scopes(objects: Iterable[Mapping[str, Any]],
                 plurals: Mapping[tuple[str, str], str]) -> dict[str, list[str]]:
    """{`group/resource`: the namespaces the plans put objects of it in}."""
    scopes: dict[str, set[str]] = {}
    for obj in objects:
        namespace = obj["metadata"].get("namespace")
        if namespace:
            group, resource = resource_of(obj, plurals)
            scopes.setdefault(f"{group}/{resource}", set()).add(namespace)
    return {k: sorted(v) for k, v in sorted(scopes.items())}


def namespace_names(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    """The namespaces the plans create."""
    return sorted({o["metadata"]["name"] for o in objects
                   if o["kind"] == "Namespace" and api_group(o) == ""})


# A CEL literal's static type, as far as the type checker's joins go: "string", "int",
# "bool", ("list", T), ("map", T); ANY for the element of an empty literal, DYN for dyn().
ANY, DYN = "any", "dyn"
CelType = str | tuple[str, Any]


def _join(a: CelType | None, b: CelType) -> CelType | None:
    """The type both a and b are assignable to, None when the checker would refuse them
    side by side (Kubernetes' CEL takes only homogeneous list and map literals)."""
    if a is None or a == ANY:
        return b
    if b == ANY:
        return a
    if DYN in (a, b):
        return DYN
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        inner = _join(a[1], b[1])
        return None if inner is None else (a[0], inner)
    return a if a == b else None


def _literal(value: Any) -> tuple[str, CelType]:
    """(CEL text, its type); members of mixed types are each wrapped in dyn()."""
    if isinstance(value, bool):
        return ("true" if value else "false"), "bool"
    if isinstance(value, str):
        return json.dumps(value), "string"
    if isinstance(value, int):
        return json.dumps(value), "int"
    if isinstance(value, Mapping):
        keys = [json.dumps(str(k)) for k in value]
        members = [_literal(v) for v in value.values()]
    elif isinstance(value, (list, tuple)):
        keys = []
        members = [_literal(v) for v in value]
    else:
        raise TypeError(f"no CEL literal for {type(value).__name__}")
    joined: CelType | None = ANY
    for _, kind in members:
        joined = _join(joined, kind)
        if joined is None:
            break
    texts = [text for text, _ in members]
    if joined is None:
        texts, joined = [f"dyn({t})" for t in texts], DYN
    if isinstance(value, Mapping):
        pairs = ", ".join(f"{k}: {t}" for k, t in zip(keys, texts, strict=True))
        return "{" + pairs + "}", ("map", joined)
    return "[" + ", ".join(texts) + "]", ("list", joined)


def cel(value: Any) -> str:
    """A CEL literal of plain data that Kubernetes' type checker takes (JSON's string
    escapes are CEL's)."""
    return _literal(value)[0]


def identity_condition(who: Mapping[str, str]) -> str:
    """CEL that holds for requests by the RBAC subject `who`, and no one else."""
    kind, name = who["kind"], who["name"]
    if kind == "ServiceAccount":
        account = f"system:serviceaccount:{who['namespace']}:{name}"
        return f"request.userInfo.username == {cel(account)}"
    if kind == "User":
        return f"request.userInfo.username == {cel(name)}"
    if kind == "Group":
        return f"has(request.userInfo.groups) && {cel(name)} in request.userInfo.groups"
    raise ValueError(f"no admission match for a {kind} subject")


def subject_text(who: Mapping[str, str]) -> str:
    """`ServiceAccount kube-system/knative-fleet`, `User ci`: the subject in a message."""
    where = f"{who['namespace']}/" if who.get("namespace") else ""
    return f"{who['kind']} {where}{who['name']}"


def policy_documents(name: str, who: Mapping[str, str], objects: Iterable[Mapping[str, Any]],
                     plurals: Mapping[tuple[str, str], str]) -> list[dict[str, Any]]:
    """The ValidatingAdmissionPolicy `name` for the identity `who` over the release
    objects, and its binding (also `name`) that denies what it rejects."""
    objects = list(objects)
    chunks = release_chunks(release_rbac(objects))
    lookup = "[]"
    for i in reversed(range(len(chunks))):
        lookup = (f"variables.key in variables.release{i}"
                  f" ? variables.release{i}[variables.key] : {lookup}")
    variables = [
        ("ns", 'has(request.namespace) ? request.namespace : ""'),
        ("resource", 'request.resource.group + "/" + request.resource.resource'),
        ("key", 'request.kind.kind + "/" + variables.ns + "/" + request.name'),
        ("rbacWrite", f'request.resource.group == {cel(RBAC_GROUP)}'
                      ' && request.operation != "DELETE"'),
        ("scopes", cel(write_scopes(objects, plurals))),
        ("namespaces", cel(namespace_names(objects))),
        ("own", cel(sorted("/".join(o) for o in OWN_OBJECTS))),
        *((f"release{i}", cel(chunk)) for i, chunk in enumerate(chunks)),
        ("entries", lookup),
        ("rules", "!has(object.rules) || object.rules == null ? [] : object.rules"),
        ("oldRules", "oldObject == null || !has(oldObject.rules) || oldObject.rules == null"
                     " ? [] : oldObject.rules"),
    ]
    refused = cel(f"{subject_text(who)} may not ")
    validations = [
        {"expression": 'variables.resource == "/namespaces"'
                       ' ? request.name in variables.namespaces'
                       ' : variables.ns == ""'
                       ' || (variables.resource in variables.scopes'
                       ' && variables.ns in variables.scopes[variables.resource])'
                       ' || variables.resource + "/" + variables.ns + "/" + request.name'
                       ' in variables.own',
         "messageExpression": f'{refused} + request.operation.lowerAscii() + " "'
                              ' + variables.resource + " " + variables.ns + "/"'
                              ' + request.name + ": the release it installs puts no such'
                              ' object there"',
         "reason": "Forbidden"},
        {"expression": "!variables.rbacWrite || size(variables.entries) > 0",
         "messageExpression": f'{refused} + "write " + variables.key'
                              ' + ": not a role or binding of the release it installs"',
         "reason": "Forbidden"},
        {"expression": "!variables.rbacWrite || size(variables.entries) == 0"
                       f" || variables.entries.exists(e, {_MATCHES_ENTRY})",
         "messageExpression": f'{refused} + "write " + variables.key'
                              ' + ": its rules, aggregation rule, role or subjects are not'
                              ' the release\'s"',
         "reason": "Forbidden"},
    ]
    policy = {
        "apiVersion": f"{POLICY_GROUP}/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": dict(PART_OF)},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"],
                "operations": ["CREATE", "UPDATE", "DELETE"]}]},
            "matchConditions": [{"name": "fleet-identity",
                                 "expression": identity_condition(who)}],
            "variables": [{"name": n, "expression": e} for n, e in variables],
            "validations": validations,
        },
    }
    binding = {
        "apiVersion": f"{POLICY_GROUP}/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": dict(PART_OF)},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return [policy, binding]

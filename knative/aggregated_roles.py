"""Aggregated ClusterRoles of an install, as plain data: which roles are aggregated,
which install roles feed them, and the rules the kube-controller-manager's
aggregation controller would write into one from a given set of live roles.

Why it matters on uninstall: the aggregation controller writes an aggregated role
with a forced server-side apply from its informer cache, without a precondition
(`pkg/controller/clusterroleaggregation`). When the role's feeders are deleted, it
recomputes the role; if that happens after the role itself was deleted but before
its cache saw the delete, the apply creates the role anew (only `rules`, no labels).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core.names import MANAGED_BY_LABEL

CONTROLLER_FIELD_MANAGER = "clusterrole-aggregation-controller"


def is_aggregated(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "ClusterRole" and bool(obj.get("aggregationRule"))


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A Kubernetes label selector (`matchLabels`, `matchExpressions`) against labels."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def selector_string(selector: Mapping[str, Any]) -> str:
    """The selector in the API's `labelSelector` query syntax, so a list returns only
    the roles it selects."""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], ",".join(expr.get("values") or [])
        parts.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})",
                      "Exists": key, "DoesNotExist": f"!{key}"}[op])
    return ",".join(parts)


def selector_strings(role: Mapping[str, Any]) -> list[str]:
    return [selector_string(sel) for sel in _selectors(role)]


def _selectors(role: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((role.get("aggregationRule") or {}).get("clusterRoleSelectors") or [])


def _labels(role: Mapping[str, Any]) -> Mapping[str, str]:
    return (role.get("metadata") or {}).get("labels") or {}


def feeds(role: Mapping[str, Any], aggregated: Mapping[str, Any]) -> bool:
    """Whether `role` is selected by `aggregated` (a role never feeds itself)."""
    if role["metadata"]["name"] == aggregated["metadata"]["name"]:
        return False
    return any(selector_matches(sel, _labels(role)) for sel in _selectors(aggregated))


def feeders_by_role(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """{aggregated role name: [names of the install's ClusterRoles it selects]}."""
    roles = [o for o in objects if o.get("kind") == "ClusterRole"]
    return {
        agg["metadata"]["name"]: sorted(r["metadata"]["name"] for r in roles if feeds(r, agg))
        for agg in roles if is_aggregated(agg)
    }


def _normal_rule(rule: Mapping[str, Any]) -> dict[str, list[str]]:
    """A PolicyRule with absent and empty lists made equal, as Go's semantic equality
    treats a nil and an empty slice of the decoded object."""
    keys = ("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs")
    return {k: list(rule.get(k) or []) for k in keys}


def expected_rules(aggregated: Mapping[str, Any],
                   live_roles: Iterable[Mapping[str, Any]]) -> list[dict[str, list[str]]]:
    """The rules the aggregation controller computes for `aggregated` from `live_roles`:
    per selector, the selected roles by name, each rule once, in first-seen order."""
    roles = sorted(live_roles, key=lambda r: r["metadata"]["name"])
    rules: list[dict[str, list[str]]] = []
    for selector in _selectors(aggregated):
        for role in roles:
            if role["metadata"]["name"] == aggregated["metadata"]["name"]:
                continue
            if not selector_matches(selector, _labels(role)):
                continue
            for rule in role.get("rules") or []:
                normal = _normal_rule(rule)
                if normal not in rules:
                    rules.append(normal)
    return rules


def settled(aggregated: Mapping[str, Any], live_roles: Iterable[Mapping[str, Any]]) -> bool:
    """True when the live aggregated role holds exactly what the controller would write
    now: the controller has seen every feeder change, so a late recompute from its
    cache writes nothing."""
    have = [_normal_rule(r) for r in aggregated.get("rules") or []]
    return have == expected_rules(aggregated, live_roles)


def is_controller_recreation(obj: Mapping[str, Any]) -> bool:
    """A ClusterRole that only the aggregation controller ever wrote: no aggregation rule,
    no label of this product, every field owned by the controller. That is what its late
    apply leaves behind after the install's role was deleted, and nothing else is.

    When the controller's cache had already seen every feeder go, its late apply carries
    no rules: the role it creates owns no field, so the API server keeps no managedFields
    entry at all, and `rules` is null. Such a role (no rules, no labels, no annotations,
    no manager) grants nothing and is counted as a re-creation too."""
    meta = obj.get("metadata") or {}
    if obj.get("aggregationRule") or (meta.get("labels") or {}).get(MANAGED_BY_LABEL):
        return False
    managers = {f.get("manager") for f in meta.get("managedFields") or []}
    if managers == {CONTROLLER_FIELD_MANAGER}:
        return True
    return (not managers and not obj.get("rules") and not meta.get("labels")
            and not meta.get("annotations"))

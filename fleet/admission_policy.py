"""What RBAC cannot say about the spoke identity, as a ValidatingAdmissionPolicy derived
from the same plans as its ClusterRole (fleet.rights), matched to that identity alone:
every create, update and delete it makes is of an object the plan names, by resource,
namespace and name (or one of knative-fleet's own, fleet.rights.OWN_OBJECTS), never of
a subresource, and what it writes into that object is the plan's
(fleet.policy_entries): each label, annotation, ConfigMap or Secret value is one the
plan gives that key or the one the object already holds (so others' additions stay and
the identity adds nothing of its own), an owner reference names an install anchor or was
there before, a Secret's type, a workload's containers, service account, security
contexts and volumes, a Service's selector, type, external name and IPs, a webhook's and
a CRD conversion's backend, a role's rules and a binding's subjects are the plan's.

An aggregated role's rules are the aggregation controller's: the identity may leave them
as they are or empty them, never write its own. The release data is inlined in the
policy's CEL, in parts of at most CHUNK_CHARS, a part per run of resources so that a
request builds only its resource's part; the policy and its binding are objects the
identity holds no right on, and nothing it may write (a namespace label, an object's
labels) changes which of its requests the policy judges.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fleet.cel_literal import cel
from fleet.policy_entries import (
    APPLY_ANNOTATIONS,
    CRDS,
    DELETING_CRD_ANNOTATIONS,
    FREE_DATA,
    WEBHOOK_CONFIGURATIONS,
    WORKLOADS,
    anchor_names,
    plan_entries,
)
from fleet.rights import RBAC_GROUP

POLICY_GROUP = "admissionregistration.k8s.io"
PART_OF = {"app.kubernetes.io/part-of": "knative-fleet"}
# The size of one part of the release map in the policy's CEL; the parser takes an
# expression of at most 100,000 code points.
CHUNK_CHARS = 50_000
# Labels the API server's Job controller writes into a Job's pod template.
JOB_TEMPLATE_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name",
                       "batch.kubernetes.io/job-name")

# The same body check for one release entry `e`, against the object as written. A
# ClusterRole without rules comes as `rules: null` (the field has no omitempty).
_MATCHES_RBAC = (
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


def _or_empty(path: str, empty: str = "{}") -> str:
    """CEL for the field at `path` (`object.metadata.labels`), or `empty` when unset."""
    parts = path.split(".")
    checks = [f"has({'.'.join(parts[:i + 1])})" for i in range(1, len(parts))]
    return f"{' && '.join(checks)} ? {path} : {empty}"


def _old(path: str, empty: str = "{}") -> str:
    """The same field of oldObject, or `empty` on a create."""
    old = _or_empty(path.replace("object.", "oldObject.", 1), empty)
    return f"oldObject == null ? {empty} : ({old})"


def _not_plans(live: str, old: str, held: str, free: str = "[]") -> str:
    """CEL: the keys of the map `live` whose value is neither one the plan holds for it
    (`held`: {key: [values]}) nor the one `old` holds, and not in `free`."""
    return (f"{live}.filter(k, !((k in {held} && {live}[k] in {held}[k])"
            f" || (k in {old} && {old}[k] == {live}[k]) || k in {free}))")


def _service_ref(s: str) -> str:
    """CEL of fleet.policy_entries.service_ref for the service reference `s`."""
    return f'{s}.namespace + "/" + {s}.name + ":" + string(has({s}.port) ? {s}.port : 443)'


def _volume_source(v: str) -> str:
    """CEL of fleet.policy_entries.volume_source for the volume `v`."""
    source = ('has(s.secret) ? "secret=" + (has(s.secret.name) ? s.secret.name : "")'
              ' : has(s.configMap) ? "configMap=" + (has(s.configMap.name)'
              ' ? s.configMap.name : "")'
              ' : has(s.serviceAccountToken) ? "token=" + (has(s.serviceAccountToken.audience)'
              ' ? s.serviceAccountToken.audience : "")'
              ' : has(s.downwardAPI) ? "downwardAPI=" : "other="')
    return (f'has({v}.secret) ? "secret:" + (has({v}.secret.secretName)'
            f' ? {v}.secret.secretName : "")'
            f' : has({v}.configMap) ? "configMap:" + (has({v}.configMap.name)'
            f' ? {v}.configMap.name : "")'
            f' : has({v}.emptyDir) ? "emptyDir:"'
            f' : has({v}.downwardAPI) ? "downwardAPI:"'
            f' : has({v}.projected) ? "projected:" + (has({v}.projected.sources)'
            f' ? {v}.projected.sources : []).map(s, {source}).join(",")'
            ' : "other:"')


def release_chunks(entries: Mapping[str, Any], limit: int = CHUNK_CHARS
                   ) -> list[dict[str, Any]]:
    """The entries (sorted by key, so by resource) in parts whose CEL literal stays under
    `limit` characters each: one policy variable each."""
    chunks: list[dict[str, Any]] = [{}]
    size = 0
    for key, entry in entries.items():
        length = len(cel({key: entry})) + len("dyn(), ")  # as a member of a larger map
        if chunks[-1] and size + length > limit:
            chunks.append({})
            size = 0
        chunks[-1][key] = entry
        size += length
    return chunks


def resource_of_key(key: str) -> str:
    """`group/resource` of an entry key `group/resource/namespace/name`."""
    return "/".join(key.split("/", 2)[:2])


def entry_lookup(chunks: list[dict[str, Any]]) -> str:
    """CEL for the request's entry, `{}` when the plan has none: only the parts that
    hold the request's resource are built."""
    parts: dict[str, list[int]] = {}
    for i, chunk in enumerate(chunks):
        for key in chunk:
            seen = parts.setdefault(resource_of_key(key), [])
            if i not in seen:
                seen.append(i)
    lookup = "dyn({})"
    for resource in reversed(sorted(parts)):
        found = "dyn({})"
        for i in reversed(parts[resource]):
            found = (f"variables.key in variables.release{i}"
                     f" ? variables.release{i}[variables.key] : {found}")
        lookup = f"variables.resource == {cel(resource)} ? ({found}) : {lookup}"
    return lookup


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


def _variables(chunks: list[dict[str, Any]], anchors: list[str]) -> list[tuple[str, str]]:
    pod = "object.spec.template.spec"
    held = "variables.entry"
    return [
        ("resource", 'request.resource.group + "/" + request.resource.resource'),
        # A Namespace is cluster-scoped: its key has no namespace, whatever the request says.
        ("ns", 'variables.resource == "/namespaces" || !has(request.namespace) ? ""'
               " : request.namespace"),
        ("key", 'variables.resource + "/" + variables.ns + "/" + request.name'),
        ("writes", 'request.operation != "DELETE"'),
        *((f"release{i}", cel(chunk)) for i, chunk in enumerate(chunks)),
        ("entry", entry_lookup(chunks)),
        ("anchors", cel(anchors)),
        ("labels", _or_empty("object.metadata.labels")),
        ("badLabels", _not_plans("variables.labels", f"({_old('object.metadata.labels')})",
                                 f"({held}.labels)")),
        ("annotations", _or_empty("object.metadata.annotations")),
        ("badAnnotations", _not_plans(
            "variables.annotations", f"({_old('object.metadata.annotations')})",
            f"({held}.annotations)",
            f"(has({held}.freeAnnotations) ? {held}.freeAnnotations : [])"
            f" + {cel(list(APPLY_ANNOTATIONS))}"
            f' + (variables.resource == "{CRDS}"'
            " && has(object.metadata.deletionTimestamp)"
            f" ? {cel(list(DELETING_CRD_ANNOTATIONS))} : [])")),
        ("badOwners", f"({_or_empty('object.metadata.ownerReferences', '[]')})"
                      '.filter(r, !((r.apiVersion == "v1" && r.kind == "ConfigMap"'
                      " && r.name in variables.anchors)"
                      f" || ({_old('object.metadata.ownerReferences', '[]')})"
                      ".exists(o, o.uid == r.uid))).map(r, r.kind + \" \" + r.name)"),
        ("badData", _not_plans(f"({_or_empty('object.data')})", f"({_old('object.data')})",
                               f"({held}.data)", cel(list(FREE_DATA)))
                    + " + " + _not_plans(f"({_or_empty('object.binaryData')})",
                                         f"({_old('object.binaryData')})",
                                         f"({held}.binaryData)")),
        ("containers", f"({_or_empty(pod + '.initContainers', '[]')}) + {pod}.containers"),
        ("badContainers",
         "variables.containers.filter(c, !(c.name in variables.entry.containers"
         " && variables.entry.containers[c.name].exists(a,"
         ' a.image == (has(c.image) ? c.image : "")'
         " && dyn(has(c.command) ? c.command : []) == a.command"
         " && dyn(has(c.args) ? c.args : []) == a.args"
         " && dyn(has(c.securityContext) ? c.securityContext : {}) == a.securityContext)))"
         ".map(c, c.name)"),
        ("badVolumes", f"({_or_empty(pod + '.volumes', '[]')}).filter(v,"
                       " !(v.name in variables.entry.volumes"
                       f" && ({_volume_source('v')}) in variables.entry.volumes[v.name]))"
                       ".map(v, v.name)"),
        ("badPodLabels", _not_plans(
            f"({_or_empty('object.spec.template.metadata.labels')})",
            f"({_old('object.spec.template.metadata.labels')})", f"({held}.podLabels)",
            f'(variables.resource == "batch/jobs" ? {cel(list(JOB_TEMPLATE_LABELS))} : [])')),
        ("podOk",
         f'(has({pod}.serviceAccountName) ? {pod}.serviceAccountName : "")'
         " in variables.entry.serviceAccounts"
         f" && dyn(has({pod}.securityContext) ? {pod}.securityContext : {{}})"
         " in variables.entry.podSecurity"
         " && ("
         + ' + "/" + '.join(f'(has({pod}.{f}) && {pod}.{f} ? "true" : "false")'
                            for f in ("hostNetwork", "hostPID", "hostIPC"))
         + ") in variables.entry.hosts"),
        ("serviceOk",
         "dyn(has(object.spec.selector) ? object.spec.selector : {})"
         " in variables.entry.selectors"
         ' && (has(object.spec.type) ? object.spec.type : "ClusterIP")'
         " in variables.entry.serviceTypes"
         ' && (has(object.spec.externalName) ? object.spec.externalName : "")'
         " in variables.entry.externalNames"
         " && (!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0"
         f" || dyn(object.spec.externalIPs) == dyn({_old('object.spec.externalIPs', '[]')}))"),
        ("badWebhooks", f"({_or_empty('object.webhooks', '[]')}).filter(w,"
                        " !(w.name in variables.entry.webhooks"
                        " && !has(w.clientConfig.url) && has(w.clientConfig.service)"
                        f" && ({_service_ref('w.clientConfig.service')})"
                        " in variables.entry.webhooks[w.name])).map(w, w.name)"),
        ("conversionOk",
         "!has(object.spec.conversion) || !has(object.spec.conversion.strategy)"
         ' || object.spec.conversion.strategy == "None"'
         " || (has(object.spec.conversion.webhook)"
         " && has(object.spec.conversion.webhook.clientConfig)"
         " && !has(object.spec.conversion.webhook.clientConfig.url)"
         " && has(object.spec.conversion.webhook.clientConfig.service)"
         f" && ({_service_ref('object.spec.conversion.webhook.clientConfig.service')})"
         " in variables.entry.conversions)"),
        ("rules", "!has(object.rules) || object.rules == null ? [] : object.rules"),
        ("oldRules", "oldObject == null || !has(oldObject.rules) || oldObject.rules == null"
                     " ? [] : oldObject.rules"),
    ]


def _validations(who: Mapping[str, str]) -> list[dict[str, str]]:
    refused = cel(f"{subject_text(who)} may not ")
    what = ('request.operation.lowerAscii() + " " + variables.resource + " "'
            ' + variables.ns + "/" + request.name')

    def rule(expression: str, reason: str) -> dict[str, str]:
        return {"expression": expression,
                "messageExpression": f"{refused} + {what} {reason}", "reason": "Forbidden"}

    def of(resources: Iterable[str], check: str) -> str:
        return (f"!variables.writes || !(variables.resource in {cel(list(resources))})"
                f" || ({check})")

    def listed(names: str) -> str:
        return f'{names}.join(", ")'

    return [
        rule('size(variables.entry) > 0 && (!has(request.subResource)'
             ' || request.subResource == "")',
             '+ ": not an object of the plan it applies"'),
        rule("!variables.writes || size(variables.badLabels) == 0",
             f'+ ": labels the plan does not give it: " + {listed("variables.badLabels")}'),
        rule("!variables.writes || size(variables.badAnnotations) == 0",
             '+ ": annotations the plan does not give it: "'
             f' + {listed("variables.badAnnotations")}'),
        rule("!variables.writes || size(variables.badOwners) == 0",
             '+ ": an owner reference that is not its install anchor: "'
             f' + {listed("variables.badOwners")}'),
        rule(of(("/configmaps", "/secrets"), "size(variables.badData) == 0"),
             f'+ ": values the plan does not hold for: " + {listed("variables.badData")}'),
        rule(of(("/secrets",), '(has(object.type) ? object.type : "Opaque")'
                               " in variables.entry.types"),
             '+ ": a Secret type the plan does not give it"'),
        rule(of(WORKLOADS, "size(variables.badContainers) == 0"),
             '+ ": containers whose image, command, arguments or security context are not'
             f' the plan\'s: " + {listed("variables.badContainers")}'),
        rule(of(WORKLOADS, "variables.podOk"),
             '+ ": a service account, pod security context or host namespace that is not'
             ' the plan\'s"'),
        rule(of(WORKLOADS, "size(variables.badVolumes) == 0"),
             f'+ ": volumes that are not the plan\'s: " + {listed("variables.badVolumes")}'),
        rule(of(WORKLOADS, "size(variables.badPodLabels) == 0"),
             '+ ": pod labels the plan does not give it: "'
             f' + {listed("variables.badPodLabels")}'),
        rule(of(("/services",), "variables.serviceOk"),
             '+ ": a selector, type, external name or external IPs that are not the plan\'s"'),
        rule(of(WEBHOOK_CONFIGURATIONS, "size(variables.badWebhooks) == 0"),
             '+ ": webhooks whose name or service are not the plan\'s: "'
             f' + {listed("variables.badWebhooks")}'),
        rule(of((CRDS,), "variables.conversionOk"),
             '+ ": a conversion webhook that is not the plan\'s"'),
        rule(of((f"{RBAC_GROUP}/{r}" for r in ("clusterroles", "roles", "clusterrolebindings",
                                                "rolebindings")),
                f"variables.entry.rbac.exists(e, {_MATCHES_RBAC})"),
             '+ ": its rules, aggregation rule, role or subjects are not the release\'s"'),
    ]


def policy_documents(name: str, who: Mapping[str, str], objects: Iterable[Mapping[str, Any]],
                     plurals: Mapping[tuple[str, str], str]) -> list[dict[str, Any]]:
    """The ValidatingAdmissionPolicy `name` for the identity `who` over the plans'
    objects, and its binding (also `name`) that denies what it rejects."""
    objects = list(objects)
    chunks = release_chunks(plan_entries(objects, plurals))
    variables = _variables(chunks, anchor_names(objects))
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
            "validations": _validations(who),
        },
    }
    binding = {
        "apiVersion": f"{POLICY_GROUP}/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": dict(PART_OF)},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return [policy, binding]

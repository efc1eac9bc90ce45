"""Where knative-fleet's install differs from the Knative Operator's for the same spec,
each with its reason (tests/e2e/test_operator_parity.py and
tests/e2e/test_operator_parity_ingresses.py find them on the lab; an entry that explains
nothing in an install it is about fails that install's test, so the list never outlives
a fix).

`row` names the row of the spec table in docs/configuration.md (or "(every object)", the
list under that table) whose "differs from the operator" text is `readme`;
tests/unit/support/test_operator_differences.py holds docs/configuration.md to this list.
"""

from __future__ import annotations

from tests.support.parity import Known

EVERY = "(every object)"
# The parity installs (`installs` of an entry; none named: every one): the rich Serving
# and Eventing of tests/e2e/test_operator_parity.py, and the Serving-only ingress
# variants of tests/e2e/test_operator_parity_ingresses.py.
RICH = "rich"
KOURIER_LB = "kourier-lb-manifests"
ISTIO = "istio"
CONTOUR = "contour"
VARIANTS = (KOURIER_LB, ISTIO, CONTOUR)
INSTALLS = frozenset({RICH, *VARIANTS})
# Installs from the release files (the variant with `manifests` lists fewer: no HPA,
# no post-install Jobs).
RELEASE_FILES = frozenset({RICH, ISTIO, CONTOUR})
# The Deployments an HPA scales in the parity specs' releases (Serving with Kourier,
# Eventing with its brokers).
HPA_SCALED = "|".join(f"{ns}/{name}" for ns, name in (
    ("knative-serving", "activator"), ("knative-serving", "webhook"),
    ("knative-serving", "3scale-kourier-gateway"), ("knative-eventing", "eventing-webhook"),
    ("knative-eventing", "mt-broker-ingress"), ("knative-eventing", "mt-broker-filter")))

KNOWN: tuple[Known, ...] = (
    Known("operator.knative.dev/*", "*", "", EVERY,
          "no KnativeServing/KnativeEventing CR on the spoke: the entry in the stack config "
          "stands for it",
          "the desired state lives in the hub's Pulumi stack, not on the spoke"),
    Known("/ConfigMap", "*/*-root-owner", "", EVERY,
          "one anchor ConfigMap `{kind}-{name}-root-owner` per install namespace, the owner "
          "of every namespaced object (`metadata.ownerReferences`) where the operator's is "
          "its CR",
          "deleting the anchor lets Kubernetes remove the install, as deleting the CR does"),
    Known("*", "*", "metadata.ownerReferences*", EVERY, "", "see the anchor"),
    Known("rbac.authorization.k8s.io/Role", "*/knative-fleet-secret-reads", "", EVERY,
          "a Role and a RoleBinding `knative-fleet-secret-reads` per install namespace with "
          "Secrets: Secret reads there, for the stack's `spokeIdentity`",
          "the spoke identity reads Secrets only there (docs/rbac.md, Secret reads); the "
          "operator reads every Secret of the cluster"),
    Known("rbac.authorization.k8s.io/RoleBinding", "*/knative-fleet-secret-reads", "", EVERY,
          "", "see the Secret reads Role"),
    Known("*", "*", "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
          EVERY,
          "applied server-side under the field manager `knative-fleet` "
          "(`pulumi.com/patchFieldManager`, `pulumi.com/patchForce` annotations), so no "
          "`kubectl.kubernetes.io/last-applied-configuration` or `manifestival` annotation",
          "server-side apply records ownership in managedFields; the operator's "
          "manifestival client merges client-side"),
    Known("*", "*", "metadata.annotations.manifestival", EVERY, "", "see server-side apply"),
    Known("*", "*", "metadata.annotations.pulumi.com/patch*", EVERY, "",
          "see server-side apply"),
    Known("*", "*", "metadata.annotations.pulumi.com/skipAwait", EVERY,
          "`pulumi.com/skipAwait` on the objects the operator does not wait for either "
          "(Services, Jobs, aggregated ClusterRoles)",
          "Pulumi would otherwise wait for Service endpoints and Job completion"),
    Known("*", "*", "metadata.labels.app.kubernetes.io/managed-by", EVERY,
          "labels `app.kubernetes.io/managed-by: knative-fleet` and "
          "`operator.knative.dev/cr-name` on every object",
          "what knative-fleet reads back from a spoke (installed version, leak checks)"),
    Known("*", "*", "metadata.labels.operator.knative.dev/cr-name", EVERY, "",
          "see the managed-by label"),
    Known("batch/Job", "*", "metadata.generateName", EVERY,
          "Jobs get the operator's fixed versioned name without the release's "
          "`generateName` beside it",
          "a named object needs no generateName; the server ignores it",
          installs=RELEASE_FILES),
    Known("apps/Deployment", "knative-eventing/pingsource-mt-adapter",
          "spec.template.spec.containers[[]0[]].env*", EVERY,
          "`pingsource-mt-adapter` keeps the release's env order; the operator, from its "
          "second reconcile on, lists the env vars the PingSource controller fills first",
          "same names and values; knative-fleet leaves those values and the adapter's "
          "replicas to the controller after install (ignored in diffs)",
          # Shows only once the operator has reconciled a second time, which a busy
          # machine may not have reached when the installs are read.
          varies=True, installs=frozenset({RICH})),
    Known("apps/Deployment", HPA_SCALED, "spec.replicas", "high-availability.replicas",
          "HPA-scaled Deployments keep the release's `spec.replicas` (the HPA's "
          "`minReplicas` holds the floor and the HPA scales them up to it); the operator "
          "also writes `spec.replicas` on them",
          "written on an HPA-scaled Deployment, every later apply would set it back after "
          "the HPA scaled, and `make drift` would report the HPA's own writes",
          # Shows only until the HPA has scaled knative-fleet's Deployments to minReplicas.
          varies=True, installs=frozenset({RICH})),
    Known("/ConfigMap", "knative-eventing/config-logging|knative-eventing/config-observability"
          "|knative-eventing/config-tracing", "*", "source.<name>.enabled",
          "where a source ships its own `config-logging`, `config-observability` or "
          "`config-tracing`, the spoke keeps Eventing core's; the operator applies the "
          "core's and every source's copy one after the other on each reconcile, so which "
          "one the spoke holds changes from one moment to the next",
          "the core's controllers read these; a copy flapping between versions is a bug",
          varies=True, installs=frozenset({RICH})),
    Known("/Namespace", "knative-eventing", "metadata.labels.*", "source.<name>.enabled",
          "", "the operator applies the core's and each source's Namespace object on every "
          "reconcile; between two reconciles it holds the last one's labels, as here",
          varies=True, installs=frozenset({RICH})),
    Known("/Namespace", "knative-serving", "metadata.labels.*", "namespace",
          "`knative-serving` keeps the labels of Kourier's Namespace object (the release's "
          "last, moved into the install namespace); the operator applies Serving core's and "
          "Kourier's Namespace object one after the other on each reconcile, so its labels "
          "change from one moment to the next",
          "one object written twice per reconcile is a bug; the last write is what the "
          "operator leaves between reconciles",
          varies=True, installs=frozenset({RICH, KOURIER_LB})),
    Known("/ConfigMap", "knative-serving/config-deployment", "data.queue-sidecar-image",
          "registry.default",
          "`config-deployment` `queue-sidecar-image` gets the `queue-proxy` image the "
          "registry gives; the operator leaves the release's (knative/operator#2313)",
          "the operator's behaviour is a bug: revisions would pull queue-proxy from the "
          "public registry the user redirected",
          installs=frozenset({RICH})),
    Known("/ConfigMap", "knative-serving/config-network", "data.ingress-class",
          "*(derived)* config-network ingress-class",
          "`ingress-class` is written for the chosen ingress; the operator leaves it to "
          "`config.network`",
          "without it Serving uses the Istio class and Routes on Kourier, Contour or "
          "Gateway API never become ready"),
)


# Rows of the spec table (docs/configuration.md) the operator has no key for.
FLEET_ONLY = frozenset({"allowMinorSkip", "deleteCrdsOnDestroy"})
# Rows no parity spec (tests/e2e/operator_specs/parity-*.yaml) exercises, and why.
NOT_COMPARED: dict[str, str] = {
    "ingress.gateway-api.enabled": "not compared: the operator v0.48.1 bundles no "
                                   "net-gateway-api",
}


# Differences read in the operator's code (v0.48.1) on paths the parity specs do not take.
FROM_CODE: dict[str, str] = {
    "ingress": "naming no ingress means Kourier here and Istio in the operator; the "
               "operator installs several ingresses at once",
    "manifests": "`${VERSION}` is the resolved `x.y.z` (the operator: `version` as written); "
                 "the operator still appends its bundled ingress, here the ingress must be "
                 "among the files; `file://` URLs and relative paths (from the project "
                 "directory) work here, not in the operator",
    **{f"ingress.istio.{gw}.servers": "server fields the operator's CRD does not list "
                                      "(`bind`, `name`, `defaultEndpoint`, "
                                      "`port.targetPort`, other `tls` keys) are applied "
                                      "here; the operator's API server prunes them"
       for gw in ("knative-ingress-gateway", "knative-local-gateway")},
}


def row_key(first_cell: str) -> str:
    """A spec-table row's name: its first cell without the (Serving)/(Eventing)
    marks and backticks ("*(derived)* config-network ingress-class" keeps its mark)."""
    cell = first_cell.strip()
    for mark in ("*(Serving)* ", "*(Eventing)* "):
        cell = cell.removeprefix(mark)
    return cell.replace("`", "")


def differs_cell(row: str) -> str:
    """What the spec table's "differs from the operator" column says for `row`."""
    texts = [k.readme for k in KNOWN if k.row == row and k.readme]
    if row in FROM_CODE:
        texts.append(f"from the operator's code: {FROM_CODE[row]}")
    if row in NOT_COMPARED:
        texts.insert(0, NOT_COMPARED[row])
    if texts:
        return "; ".join(texts)
    return "knative-fleet only" if row in FLEET_ONLY else "none"


def every_object_lines() -> list[str]:
    """The list under the spec table (docs/configuration.md): what every install differs in."""
    return [f"- {k.readme}" for k in KNOWN if k.row == EVERY and k.readme]

"""The lab's spoke identity: the ServiceAccount the access provider's token is for, bound
to the ClusterRole knative-fleet derives from a plan and held by the admission policy
derived beside it (operations.access_roles), instead of cluster-admin. The lab's stacks
install every Knative version of the release mirror with each ingress and each Eventing
source, and the parity tests the Knative Operator's own release files (its kodata, when
the tests' tools are built), so the lab's role and policy are the union of those plans'.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from config.fleet import parse_fleet_config
from config.identity import subject_of
from core.errors import PlanError
from knative.plan import InstallPlan
from lab.operator import operator_data
from lab.paths import RELEASES
from operations.access_roles import spoke_documents_of, stack_plans

# A namespace whose name has this prefix is a lab test's scratch space, outside the
# admission policy: the lab's smoke tests drive the engine, the provider and the exec
# plugin there as the spoke identity, with objects no release has, under a Role the test
# binds there (lab.scratch). The policy's own condition, by name: nothing the identity
# may write (a label, a namespace: it creates only the plan's) moves a request out of it.
SCRATCH_PREFIX = "lab-scratch-"
VERSIONS = ("1.22", "1.23")
INGRESSES = ("kourier", "istio", "contour", "gateway-api")
SOURCES = ("kafka", "rabbitmq", "redis", "github", "gitlab", "ceph")


def _entry(i: int, serving: str, eventing: str, ingress: str,
           sources: tuple[str, ...]) -> dict[str, Any]:
    # The lab's stacks delete CRDs on destroy too (fleet.rights.kept_crds: only then does
    # the identity get `delete` on a CRD).
    return {"name": f"s{i}", "clusterProfileRef": {"name": f"s{i}", "namespace": "lab"},
            "serving": {"version": serving, "ingress": {ingress: {"enabled": True}},
                        "deleteCrdsOnDestroy": True},
            "eventing": {"version": eventing, "deleteCrdsOnDestroy": True,
                         "source": {s: {"enabled": True} for s in sources}}}


def release_plans(release_base: str, versions: list[tuple[str, str]]) -> list[InstallPlan]:
    """Plans of every (Serving, Eventing) version pair with each ingress, and Eventing
    with no source and with each source; a combination the release base has no files for
    is no lab stack's."""
    plans: list[InstallPlan] = []
    combos = [(s, e, ingress, ()) for (s, e), ingress in itertools.product(versions, INGRESSES)]
    combos += [(s, e, INGRESSES[0], (source,))
               for (s, e), source in itertools.product(versions, SOURCES)]
    for i, (serving, eventing, ingress, sources) in enumerate(combos):
        cfg = parse_fleet_config({"releaseBase": release_base,
                                  "fleet": [_entry(i, serving, eventing, ingress, sources)]})
        try:
            plans += stack_plans(cfg)
        except PlanError:
            continue
    return plans


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def kodata_versions(kodata: Path) -> list[tuple[str, str]]:
    """The newest (Serving, Eventing) version pair of one minor in the operator's kodata:
    the one it installs, and the parity tests with it."""
    def versions(component: str) -> list[str]:
        return sorted((p.name for p in (kodata / component).iterdir() if p.is_dir()),
                      key=_version)

    pairs = [(s, e) for s in versions("knative-serving") for e in versions("knative-eventing")
             if _version(s)[:2] == _version(e)[:2]]
    return pairs[-1:]


def _kodata_plans(bin_path: Path, scratch: Path) -> Iterator[InstallPlan]:
    """Plans of the operator's own release files, through the same mirror the parity
    tests install them from."""
    kodata = operator_data(bin_path) / "kodata"
    if not (kodata / "knative-serving").is_dir():
        return
    from tests.support.parity import mirror_from_kodata  # the tests' own mirror layout

    for serving, eventing in kodata_versions(kodata):
        mirror = mirror_from_kodata(kodata, scratch / f"{serving}-{eventing}", serving,
                                    eventing)
        yield from release_plans(f"file://{mirror}", [(serving, eventing)])


def lab_plans(bin_path: Path | None = None) -> list[InstallPlan]:
    """The plans of every install the lab's tests make."""
    plans = release_plans(f"file://{RELEASES}", [(v, v) for v in VERSIONS])
    if bin_path is not None:
        with tempfile.TemporaryDirectory(prefix="lab-kodata-") as scratch:
            plans += list(_kodata_plans(bin_path, Path(scratch)))
    return plans


def lab_role_documents(account: str, namespace: str,
                       bin_path: Path | None = None) -> list[dict[str, Any]]:
    """The admission policy and ClusterRole every lab stack's plan fits in, and their
    bindings to the account."""
    return lab_documents_of(lab_plans(bin_path), account, namespace)


def lab_documents_of(plans: list[InstallPlan], account: str,
                     namespace: str) -> list[dict[str, Any]]:
    """lab_role_documents of the given plans: the printed rights, and the policy's own
    condition that leaves the lab's scratch namespaces out."""
    docs = spoke_documents_of(plans, subject_of(f"ServiceAccount:{namespace}/{account}"))
    for doc in docs:
        if doc["kind"] == "ValidatingAdmissionPolicy":
            doc["spec"]["matchConditions"].append({
                "name": "not-a-lab-scratch-namespace",
                "expression": 'request.resource.resource == "namespaces"'
                              " || !has(request.namespace)"
                              f" || !request.namespace.startsWith({SCRATCH_PREFIX!r})"
                              .replace("'", '"')})
    return docs

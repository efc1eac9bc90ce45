"""Is a spoke healthy? Every Deployment of its install rolled out and Available: what
the Knative Operator waits for, and what pulumi-kubernetes' Deployment await checks
(generation observed, the new ReplicaSet fully available)."""

from __future__ import annotations

from collections.abc import Mapping


def _condition(obj: Mapping, kind: str) -> Mapping:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond
    return {}


def _said(cond: Mapping, kind: str) -> str:
    if not cond:
        return f"no {kind} condition yet"
    text = f"{kind}={cond.get('status')}"
    if cond.get("reason"):
        text += f" ({cond['reason']}: {cond.get('message', '')})"
    return text


def deployment_problem(obj: Mapping | None, name: str) -> str | None:
    """None when the Deployment has rolled out and is Available, else why not."""
    if obj is None:
        return f"Deployment {name} does not exist"
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    want = (obj.get("spec") or {}).get("replicas", 1)
    if status.get("observedGeneration", 0) < meta.get("generation", 0):
        return f"Deployment {name}: its controller has not seen the latest change yet"
    available = _condition(obj, "Available")
    if available.get("status") != "True":
        return f"Deployment {name}: {_said(available, 'Available')}"
    progressing = _condition(obj, "Progressing")
    if progressing and progressing.get("reason") != "NewReplicaSetAvailable":
        return (f"Deployment {name}: rollout not complete, {_said(progressing, 'Progressing')}, "
                f"{status.get('updatedReplicas', 0)} updated and "
                f"{status.get('availableReplicas', 0)} available of {want}")
    if status.get("updatedReplicas", 0) < want or status.get("availableReplicas", 0) < want:
        return (f"Deployment {name}: {status.get('updatedReplicas', 0)} updated and "
                f"{status.get('availableReplicas', 0)} available of {want} replicas")
    return None


def spoke_problems(live: Mapping[str, Mapping | None], expected: list[str]) -> list[str]:
    """The problems of every Deployment the install has on a spoke (`namespace/name`)."""
    return [p for name in expected if (p := deployment_problem(live.get(name), name))]


def wave_failures(problems: Mapping[str, list[str]],
                  unreachable: Mapping[str, str]) -> dict[str, str]:
    """Spoke -> why it fails the wave: unreachable, or its Deployments' problems."""
    failures = {spoke: f"unreachable: {why}" for spoke, why in unreachable.items()}
    failures.update({spoke: "; ".join(p) for spoke, p in problems.items() if p})
    return dict(sorted(failures.items()))


def wave_failed_message(wave: str, failures: Mapping[str, str], timeout_s: float,
                        max_failures: int, later: list[str]) -> str:
    lines = "\n".join(f"  spoke {s!r}: {why}" for s, why in failures.items())
    stopped = (f"Later waves were not started ({', '.join(later)}): their spokes' objects, "
               "in the clusters and in the state, are as they were."
               if later else "It was the last wave.")
    return (f"wave {wave!r} is not healthy: {len(failures)} spoke(s) failed within "
            f"{timeout_s:.0f}s, more than its maxFailures ({max_failures}):\n{lines}\n"
            f"{stopped} Fix: correct or revert the change in the stack config and run "
            "`pulumi up` again; see README 'Groups and waves'.")

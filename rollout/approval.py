"""Approval gates a change, not a stack.

A wave with `approval: Required` gets an approval gate in front of it: a resource whose
input is a digest of what the wave's spokes are planned to run. The plan is the same
whether or not the run is approved, and a preview registers all of it, so a preview (and
a review) shows every change, the waiting wave's too, and the approved `up` of a review
plans exactly what the review showed. Only an `up` reads the approval: when the digest
is the one applied last, the gate is unchanged and the wave needs nothing; when it
differs and KNATIVE_FLEET_APPROVE does not name the wave, the run stops before it: the
wave and the waves after it keep their objects, in the clusters and in the state, and
nothing is deleted.

The run stops there by itself, so that its stack outputs are recorded (README,
"Outputs"): a failed step makes the engine stop the program before its outputs reach
it, while a program that fails once they are registered has them kept. The stack output
`approvals` keeps, per wave, the digest its gate last let through, so an `up` knows
before it registers anything which wave waits (`waiting_wave`); it registers only the
waves before that one, records `waves` with WaitingForApproval for it and NotStarted
after it, and fails. Where that record cannot tell, the gate is registered, and its own
step fails unless the run is approved for the wave: Pulumi then starts nothing that
depends on it (the stop as before, with no outputs recorded).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.digest import digest

if TYPE_CHECKING:  # fleet.waves imports this module
    from fleet.plan import WaveStep

# The stack output that keeps, per wave with an approval gate, the digest of the change
# its gate last let through.
APPROVALS_OUTPUT = "approvals"
# The `waves` output's status of a wave whose change waits for approval.
WAITING_FOR_APPROVAL = "WaitingForApproval"

# What the digest leaves out of a spoke's install: how it is reached, not what runs there;
# nor how its objects are held (its CRDs by the CRDs-first step: fleet.crds_first, with the
# fields the API server fills in anyway: knative.crd_defaults; its cluster RBAC and
# namespaced objects by their steps: fleet.held_rbac, fleet.held_namespaced), so a program
# that holds them so asks no wave for approval again.
_REACH = frozenset({"kubeconfig", "identifier", "connection", "plugin_timeout_s",
                    "owner_guard", "crds_first", "cluster_rbac", "namespaced_objects",
                    "server_defaults"})


def wave_digest(installs: Mapping[str, Any]) -> str:
    """A digest of what each reached spoke of a wave is planned to run (spoke name ->
    its fleet.plan.SpokeInstall); the same plan gives the same digest in every run."""
    return digest(dict(sorted(installs.items())), _REACH)


def gate_name(wave: str) -> str:
    """The approval gate's resource name."""
    return f"approval-{wave}"


def waiting_message(wave: str, spokes: Iterable[str], later: Iterable[str]) -> str:
    """What a run that stops before a wave waiting for approval says."""
    later = list(later)
    stopped = (f"it and the waves after it ({', '.join(later)}) were not started; their "
               "objects" if later else "it was not started; its objects")
    return (f"wave {wave!r} waits for approval: its spokes ({', '.join(spokes) or 'none'}) "
            f"change, and {stopped}, in the clusters and in the state, are as they were. "
            "To approve, run again with "
            f"KNATIVE_FLEET_APPROVE={wave} (or python -m runner up --approve {wave}).")


def refusal(props: Mapping[str, Any], approved: frozenset[str]) -> str | None:
    """Why the gate's step must fail (the wave changes and the run is not approved for
    it), or None."""
    wave = str(props["wave"])
    if wave in approved:
        return None
    return waiting_message(wave, props.get("spokes") or [], props.get("later") or [])


def recorded_approvals(outputs: Mapping[str, Any] | None) -> dict[str, str] | None:
    """Per wave, the digest its gate last let through, as the stack's last recorded run
    left it; None when its outputs cannot tell: they could not be read, or a program that
    kept no such record wrote them (its gates may hold any digest). Outputs without
    `waves` (a new stack, or one that had no rollout) record no gate, so none let anything
    through."""
    if outputs is None:
        return None
    record = outputs.get(APPROVALS_OUTPUT)
    if isinstance(record, Mapping):
        return {str(w): d for w, d in record.items() if isinstance(d, str)}
    return {} if "waves" not in outputs else None


def waiting_wave(steps: Sequence[WaveStep], approved: frozenset[str],
                 recorded: Mapping[str, str] | None) -> WaveStep | None:
    """The wave an `up` stops before: the first started wave whose planned change is not
    the one its gate last let through, when the run is not approved for it. None when no
    wave waits, or when the record cannot tell (the gate's own step decides then)."""
    if recorded is None:
        return None
    for step in steps:
        if step.started and step.approval is not None and step.name not in approved \
                and recorded.get(step.name) != step.approval.changes:
            return step
    return None


@dataclass(frozen=True)
class ApprovalStop:
    """What an `up` knows of its approval gates before it registers anything."""

    waiting: WaveStep | None = None  # the wave it stops before
    recorded: dict[str, str] | None = None  # recorded_approvals of the last outputs
    # The last recorded `spokes` output: the spokes of the waves it does not start keep it.
    spokes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str | None:
        """What the run fails with, once its outputs are recorded."""
        if self.waiting is None:
            return None
        assert self.waiting.approval is not None
        return waiting_message(self.waiting.name, self.waiting.approval.spokes,
                               self.waiting.later)


def approval_stop(steps: Sequence[WaveStep], approved: frozenset[str],
                  outputs: Mapping[str, Any] | None) -> ApprovalStop:
    """Where an `up` stops, from the stack's last recorded outputs (None: unreadable)."""
    recorded = recorded_approvals(outputs)
    spokes = (outputs or {}).get("spokes")
    return ApprovalStop(waiting_wave(steps, approved, recorded), recorded,
                        spokes if isinstance(spokes, Mapping) else {})

"""Approval gates a change, not a stack.

A wave with `approval: Required` gets an approval gate in front of it: a resource whose
input is a digest of what the wave's spokes are planned to run. The program registers
the same plan whether or not the run is approved, so a preview (and a review) shows
every change, the waiting wave's too, and the approved `up` of a review plans exactly
what the review showed. Only the gate's own step, in `up`, reads the approval: when the
digest is the one applied last, the gate is unchanged and the wave needs nothing; when
it differs, the gate's step fails unless KNATIVE_FLEET_APPROVE names the wave, and
Pulumi starts nothing that depends on it: the wave and the waves after it keep their
objects, in the clusters and in the state, and nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core.digest import digest

# What the digest leaves out of a spoke's install: how it is reached, not what runs there;
# nor how its CRDs are registered (applied first, then imported: fleet.crds_first, with
# the fields the API server fills in anyway: knative.crd_defaults), so a program that
# registers them so asks no wave for approval again.
_REACH = frozenset({"kubeconfig", "identifier", "connection", "plugin_timeout_s",
                    "owner_guard", "crds_first", "import_id", "server_defaults"})


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

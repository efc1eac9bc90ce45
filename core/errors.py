"""Every error knative-fleet reports to a user, in one tree.

    FleetError                  the message alone says what is wrong and how to fix it
     ├── ConfigError            an input the user wrote is invalid; nothing is registered
     │    ├── FleetConfigError      the stack config (`knative-fleet:*` keys)
     │    ├── ProviderFileError     the access-provider file it names
     │    ├── SettingsError         a `KNATIVE_FLEET_*` variable (core.settings)
     │    └── SelectionError        what a run selects does not fit: groups and waves
     │         │                    against the ClusterProfiles on the hub (collisions,
     │         │                    one cluster twice, no wave), or the stacks a runner
     │         │                    is asked for (runner.selection)
     │         └── InventoryUnavailable  the hub's ClusterProfiles cannot be listed
     │                                   (fleet.planner)
     ├── ProfileError           one step of resolving a ClusterProfile failed (`reason`)
     ├── ResolutionError        a spoke cannot be reached: `spoke`, `reason`, the fix;
     │                          that spoke is left untouched, the others are updated
     ├── PlanError              the Knative side cannot plan a spoke
     │    ├── ReleaseError          a release cannot be resolved or read
     │    └── TransformError        an entry's spec does not fit the release
     ├── BackendUnknown         the stack's state backend cannot be told or read
     │    │                     (ownership.identity)
     │    ├── OutputsUnreadable     the stack's outputs, where its owner id is kept
     │    └── StateUnreadable       the stack's state, read for the typed resources of
     │                              held objects an earlier release left in it
     │                              (components.held_typed)
     ├── OwnershipError         a spoke this stack may not change now (ownership.errors)
     │    ├── OwnedByAnotherStack   another stack's record is on the install
     │    ├── HeldByAnotherRun      another run holds the spoke
     │    └── OwnerUnknown          the record could not be read (fail closed)
     ├── StepError              a dynamic resource's step on a spoke failed (lifecycle/):
     │    │                     the spoke, what was left as it was, the way on
     │    ├── CrdsNotApplied        a component's CRDs were not applied, Established or
     │    │                         (deleteCrdsOnDestroy) deleted
     │    ├── ObjectsNotApplied     the objects a holding step holds (cluster RBAC,
     │    │                         namespaced objects) were not applied, read or
     │    │                         deleted (lifecycle.held_objects)
     │    └── WebhookConfigurationsLeft  an install's webhook configurations could not
     │                                   be deleted before their webhooks
     └── Refused                a command will not act as asked: why, and what to do
          ├── NotReviewed           no review a run can be held to
          ├── RolledBack            the config about to be applied failed and was
          │                         rolled back (runner.worker)
          ├── RollbackRefused       the stack cannot be rolled back (runner.rollback)
          └── HandOverRefused       a spoke cannot be handed over (operations.hand_over)

`reason` is a `core.reasons.Reason`: the Knative Operator's condition reason for
the same failure, so users of both read the same word.

Outside the tree, on purpose: `runner.plan.Interrupted` (a Ctrl-C, carrying the results
so far; a handler of FleetError must not swallow it), the failures a dynamic provider
reports to the engine as RuntimeError (the engine shows their message alone), and the
lab's and benchmarks' own errors (lab/, bench/: tools, not the product).
"""

from __future__ import annotations

from core.reasons import REMEDIATION, Reason


class FleetError(Exception):
    """Base of every error this project raises on purpose."""


class ConfigError(FleetError, ValueError):
    """An input the user wrote is invalid; raised before any resource is registered."""


class FleetConfigError(ConfigError):
    """All problems of a fleet config, one line each with its config path."""


class ProviderFileError(ConfigError):
    """The provider file is unusable; the message alone tells the user what to fix."""


class SelectionError(ConfigError):
    """What a run selects does not fit: groups and waves, held against the hub's
    ClusterProfiles, do not give every spoke one name, one spec and one wave (each line
    names its config path), or the stacks a runner is asked for cannot be chosen (the
    message says what to fix)."""


class ProfileError(FleetError):
    """A resolution step failed; spoke-agnostic so each step stays testable on its own.

    The resolver wraps it into `ResolutionError`, which adds the spoke and the fix.
    """

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message

    def __reduce__(self):  # keep it picklable despite the custom __init__
        return (type(self), (self.reason, self.message))


class ResolutionError(FleetError):
    """A spoke could not be resolved; `str()` is the complete user-facing sentence.

    Messages are built from non-secret facts only (names, URLs, the plugin's stderr
    with token-looking values redacted), never from credentials.
    """

    def __init__(self, spoke: str, reason: Reason, message: str) -> None:
        self.spoke = spoke
        self.reason = reason
        self.message = message
        super().__init__(str(self))

    def __reduce__(self):  # keep it picklable despite the custom __init__
        return (type(self), (self.spoke, self.reason, self.message))

    def __str__(self) -> str:
        return (
            f"spoke {self.spoke!r}: {self.reason}: {self.message}. "
            f"Fix: {REMEDIATION[self.reason]}"
        )


class PlanError(FleetError, ValueError):
    """The Knative side cannot plan a spoke from its entry and the release."""


class ReleaseError(PlanError):
    """A release cannot be resolved or read; the message says what to fix."""


class TransformError(PlanError):
    """An entry's spec does not fit the release (names the fix)."""


class StepError(FleetError):
    """A dynamic resource's step on a spoke failed; the message names the spoke, what
    was left as it was and the way on."""


class Refused(FleetError):
    """A command will not act as asked (a run, a rollback, a hand-over); the message
    says why, what was left as it was and what to do."""


class NotReviewed(Refused):  # noqa: N818 - what the refused run says
    """There is no review a run can be held to: none with a plan for the stack, or one
    of another stack."""

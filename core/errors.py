"""Every error knative-fleet reports to a user, in one tree.

    FleetError                  the message alone says what is wrong and how to fix it
     ├── ConfigError            an input the user wrote is invalid; nothing is registered
     │    ├── FleetConfigError      the stack config (`knative-fleet:*` keys)
     │    ├── ProviderFileError     the access-provider file it names
     │    └── SelectionError        groups and waves do not fit the ClusterProfiles
     │                              on the hub (collisions, one cluster twice, no wave)
     ├── ProfileError           one step of resolving a ClusterProfile failed (`reason`)
     ├── ResolutionError        a spoke cannot be reached: `spoke`, `reason`, the fix;
     │                          that spoke is left untouched, the others are updated
     └── PlanError              the Knative side cannot plan a spoke
          ├── ReleaseError          a release cannot be resolved or read
          └── TransformError        an entry's spec does not fit the release

`reason` is a `core.reasons.Reason`: the Knative Operator's condition reason for
the same failure, so users of both read the same word.
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
    """Groups and waves, held against the hub's ClusterProfiles, do not give every
    spoke one name, one spec and one wave; each line names its config path."""


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

"""The version step of an install: spec.version and allowMinorSkip, the operator's
IsVersionValidMigrationEligible (pkg/reconciler/common/releases.go), with this product's
allowMinorSkip to accept a bigger step.

A check of the plan, between the version a spoke runs and the one its entry asks for
(models.version says what a version looks like): it changes no object.
"""

from __future__ import annotations

from core.errors import TransformError


def check_version_step(component: str, installed: str | None, target: str,
                       allow_minor_skip: bool) -> None:
    """The operator's rule: upgrade or downgrade by at most one minor version at a time,
    so every release's migrations run in order. An entry may accept a bigger step."""
    if installed is None or allow_minor_skip:
        return
    have = tuple(int(p) for p in installed.split(".")[:2])
    want = tuple(int(p) for p in target.split(".")[:2])
    if have[0] != want[0] or abs(have[1] - want[1]) > 1:
        step = "upgrade" if want > have else "downgrade"
        raise TransformError(
            f"{component} runs {installed} on this spoke; {target} is a {step} across more "
            f"than one minor version, which Knative does not support. Move one minor version "
            f"per `pulumi up` (e.g. {have[0]}.{have[1] + (1 if want > have else -1)} first), "
            f"or set `{component}.allowMinorSkip: true` on this entry to accept the step")

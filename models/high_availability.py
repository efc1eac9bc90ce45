"""spec.high-availability: the model of the operator's HighAvailabilityTransform
(pkg/reconciler/common/ha.go); knative.transforms.high_availability applies it."""

from __future__ import annotations

from pydantic import Field, StrictInt

from core.strict import Strict


class HighAvailability(Strict):
    """`high-availability`: replicas of every control-plane Deployment not scaled by an
    autoscaler, and the floor of the release HPAs."""

    replicas: StrictInt = Field(ge=0)

"""spec.defaultBrokerClass: the model of the operator's DefaultBrokerConfigMapTransform
(pkg/reconciler/knativeeventing/common/defaultbroker.go);
knative.transforms.default_broker_class applies it. Eventing only."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

# The class of Brokers that name none: a class name, no spaces.
BrokerClass = Annotated[str, Field(min_length=1, pattern=r"^\S+$")]

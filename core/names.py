"""Labels and names that several steps agree on: render writes them, access and review
read them back from a spoke, the models refuse them as user labels. A leaf: it imports
nothing from the project, so every step may import it."""

from __future__ import annotations

from typing import Literal

Component = Literal["serving", "eventing"]

# The install namespace, the operator's CR kind and the CR's name of each component.
NAMESPACE: dict[Component, str] = {"serving": "knative-serving", "eventing": "knative-eventing"}
KIND: dict[Component, str] = {"serving": "KnativeServing", "eventing": "KnativeEventing"}
CR_NAME: dict[Component, str] = {"serving": "knative-serving", "eventing": "knative-eventing"}

# Every object of an install carries this label with this value (access/ selects on it).
# The API group of roles and bindings.
RBAC_GROUP = "rbac.authorization.k8s.io"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "knative-fleet"
# The release version a release object carries (access/ reads what runs on a spoke).
VERSION_LABEL = "app.kubernetes.io/version"
# The name of the operator CR an object belongs to, as the operator labels it.
CR_NAME_LABEL = "operator.knative.dev/cr-name"
# The operator's InjectLabel(SelectorKey, SelectorValue), an extra transformer of both
# reconcilers: every object it installs, release or not (sources, additionalManifests),
# carries app.kubernetes.io/name: knative-serving | knative-eventing.
NAME_LABEL = "app.kubernetes.io/name"
NAME_VALUE: dict[Component, str] = {"serving": "knative-serving",
                                    "eventing": "knative-eventing"}
# Objects Pulumi does not wait for (render sets it, the Spoke component on its own objects).
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"
# The stack that manages the install, on its anchors (ownership.records): its name for
# people, and the id that stays with the stack's state (ownership.identity).
OWNER_ANNOTATION = "knative-fleet.dev/owner"
OWNER_ID_ANNOTATION = "knative-fleet.dev/owner-id"


def anchor_name(kind: str, cr_name: str) -> str:
    """The operator's anchor name, e.g. knativeserving-knative-serving-root-owner: render
    creates it, access reads the owner record on it, the owner guard checks it."""
    return f"{kind.lower()}-{cr_name}-root-owner"

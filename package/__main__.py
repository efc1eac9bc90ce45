"""The knative-fleet package's provider: serves the `Fleet` component
(components.fleet_component) to every Pulumi language. Started by
`pulumi-resource-knative-fleet` beside it; the repository's modules are found from here."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pulumi.provider.experimental import component_provider_host  # noqa: E402

from components.dynamic_provider import importable_from  # noqa: E402
from components.fleet_component import Fleet  # noqa: E402

# The engine starts the dynamic resources' provider in the calling project's directory,
# not here: their pickled providers find this repository's modules themselves.
importable_from(ROOT)

if __name__ == "__main__":
    component_provider_host([Fleet], name="knative-fleet")

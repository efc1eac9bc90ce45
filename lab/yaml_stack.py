"""A stack of the Pulumi YAML example (examples/yaml/), which uses the knative-fleet
package by path, run through the released Pulumi CLI as a user runs it: the YAML language
host (toolchain/yaml-host.sh) beside the tests' tools, the project's virtualenv first on
PATH for the package's provider."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lab.admitted import admit
from lab.fleet import fleet_config
from lab.handle import Lab
from lab.paths import RELEASES, REPO
from lab.stack import Stack

EXAMPLE = REPO / "examples" / "yaml"
YAML_HOST_SCRIPT = REPO / "toolchain" / "yaml-host.sh"


def yaml_host(build: bool = True) -> Path:
    """The directory holding pulumi-language-yaml (the tests' tools' bin dir); built when
    `build` and missing."""
    out = subprocess.run([str(YAML_HOST_SCRIPT), *([] if build else ["--print"])],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return Path(out.strip().splitlines()[-1])


class YamlFleetStack(Stack):
    """A `t-*` stack of the YAML example (its stack files are ignored by git)."""

    def __init__(self, lab: Lab, name: str, state_dir: Path) -> None:
        yaml_host()
        super().__init__(EXAMPLE, name, state_dir, lab.bin)
        self.lab = lab

    def configure(self, fleet: list[dict], rollout: dict | None = None,
                  admit_rights: bool = True) -> None:
        """The example's config: the lab's hub, provider file and release mirror, and
        `fleet` (and `rollout`), as a knative-fleet stack file's keys; the lab identity's
        rights grown to hold it first, as for a Python stack (lab.admitted)."""
        extra = {"rollout": rollout} if rollout else {}
        if admit_rights:
            admit(self.lab, fleet_config(self.lab, fleet, **extra))
        config = {
            "knative-fleet-yaml:hubKubeconfig": self.lab.hub.kubeconfig,
            "knative-fleet-yaml:providerFile": self.lab.provider_file,
            "knative-fleet-yaml:releaseBase": f"file://{RELEASES}",
            "knative-fleet-yaml:fleet": fleet,
        }
        if rollout:
            config["knative-fleet-yaml:rollout"] = rollout
        self.write_config(EXAMPLE, config)

    def cleanup(self) -> None:
        self.config_file(EXAMPLE).unlink(missing_ok=True)

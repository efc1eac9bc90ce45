"""Writes the recorded providers: each dynamic provider serialized as the Pulumi SDK
serializes it into a stack's state (`pulumi.dynamic.dynamic.serialize_provider`: dill,
base64). The `.b64` files beside this script were written by the program of commit
7dbe179, the last whose states a `pulumi destroy` of today must still read:

    git archive 7dbe179 | tar -x -C /tmp/kf-7dbe179
    .venv/bin/python tests/unit/components/recorded_providers/record.py /tmp/kf-7dbe179

They are never rewritten by the current program: a test reads them back with the SDK's
own deserializer and holds the current providers to how those states behave.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def record(source: Path) -> None:
    """Serializes the five providers of the program at `source` into HERE."""
    sys.path.insert(0, str(source))
    from pulumi.dynamic.dynamic import serialize_provider

    from components import aggregated_role_guard, membership, owner_guard, wave_gate

    providers = {
        "wave_gate": wave_gate._Provider(),
        "aggregated_role_guard": aggregated_role_guard._Provider(
            aggregated_role_guard.settle_and_delete),
        "aggregated_role_sweep": aggregated_role_guard._Provider(aggregated_role_guard.sweep),
        "owner_guard": owner_guard._Provider(),
        "membership": membership._Provider(),
    }
    for name, provider in providers.items():
        (HERE / f"{name}.b64").write_text(serialize_provider(provider) + "\n")


if __name__ == "__main__":
    record(Path(sys.argv[1]).resolve())

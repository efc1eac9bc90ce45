"""A stack installed by the previous version of knative-fleet updates to this one with
no delete and no replace, and every object on the spoke keeps its uid.

The previous version is the program as it was before the newest commit that changed it
(tests/support/previous_version.py), written out of git into a directory of its own and
run by the real Pulumi engine against a lab spoke, with the same state backend and
stack; this checkout then previews and updates that stack. A change of a resource's
type, name or parent without an alias, or an input the provider must replace for,
shows here as a delete or a replace.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from lab.admitted import previous_release_rights
from lab.fleet import STACKS, FleetStack, entry, fleet_config
from lab.handle import Lab
from lab.paths import REPO
from lab.stack import Stack
from tests.support.fleet import deployments_available
from tests.support.previous_version import previous_commit, write_out
from tests.support.snapshot import expires, objects

pytestmark = pytest.mark.e2e
SPOKE = "spoke-1"
DESTRUCTIVE = {"delete", "replace", "create-replacement", "delete-replaced",
               "discard", "discard-replaced"}


def managed_uids(api: client.ApiClient) -> dict[tuple[str, str, str], str]:
    """{(group/Kind, namespace, name): uid} of every object knative-fleet applied and
    that lives until a client deletes it (the TTL controller collects the release's
    finished Jobs on its own schedule)."""
    return {key: obj["metadata"]["uid"] for key, obj in objects(api).items()
            if any(m.get("manager") == "knative-fleet"
                   for m in obj["metadata"].get("managedFields") or [])
            and not expires(key, obj)}


@pytest.fixture(scope="module")
def upgraded(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Installed by the previous version; then this checkout's preview and update."""
    commit = previous_commit()
    project = write_out(commit, tmp_path_factory.mktemp("previous") / "project")
    (project / ".venv").symlink_to(REPO / ".venv")  # Pulumi.yaml's virtualenv: this one's
    state = tmp_path_factory.mktemp("state")
    name = f"t-upgrade-{uuid.uuid4().hex[:6]}"
    old = Stack(project, name, state, lab.bin)
    new = FleetStack(lab, name, state)
    fleet = [entry(SPOKE)]
    api = lab.spokes[0].api()
    try:
        old.init()
        config = fleet_config(lab, fleet)
        old.write_config(project / "stacks", config)
        with previous_release_rights(lab, config):  # the rights printed by that version
            installed = old.up()
        assert installed.ok, f"the previous version ({commit[:10]}) failed to install:\n" \
            + installed.out
        before = managed_uids(api)
        # The stack file carries the passphrase's salt: this checkout takes it over.
        shutil.copy(old.config_file(project / "stacks"), new.config_file(STACKS))
        new.configure(fleet)
        preview, steps = new.preview_steps()
        assert preview.ok, preview.why
        update = new.up()
        yield {"commit": commit, "steps": steps, "update": update, "before": before,
               "after": managed_uids(api), "history": new.history(), "api": api}
    finally:
        new.destroy()
        new.remove()
        new.cleanup()


def test_the_preview_of_the_upgrade_deletes_and_replaces_nothing(upgraded: dict) -> None:
    bad = [(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in upgraded["steps"]
           if s["op"] in DESTRUCTIVE]
    assert bad == [], f"upgrading from {upgraded['commit'][:10]}: {bad[:20]}"
    assert upgraded["steps"], "the preview showed no step at all"


def test_the_upgrade_keeps_every_object(upgraded: dict) -> None:
    assert upgraded["update"].ok, upgraded["update"].out
    changes = upgraded["history"][0].get("resourceChanges") or {}
    assert not set(changes) & DESTRUCTIVE, changes
    before, after = upgraded["before"], upgraded["after"]
    assert len(before) > 100, f"only {len(before)} objects applied by knative-fleet"
    gone = sorted(set(before) - set(after))
    recreated = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    assert gone == [] and recreated == [], (gone[:10], recreated[:10])
    states = deployments_available(upgraded["api"], "knative-serving")
    assert states and all(states.values()), states

"""The providers existing stack states hold still work: `pulumi destroy` unpickles the
provider of the old state, never the program's, to run its delete.

`recorded_providers/` holds each provider as the program of commit 7dbe179 serialized it
(its `record.py` says how). Each is unpickled here as the dynamic provider's process
unpickles it (`pulumi.dynamic.__main__.get_provider`: dill under the SDK's
`_deserialize`, then `configure`), which restores the instance's `__dict__` and never
calls `__init__`, and is held to what that program did: the same diff keys, the same
create and update outs, and a delete that runs the step now in lifecycle/ (replaced here
by a recorder: no cluster). The program's own providers must pickle to the same names.
"""

from __future__ import annotations

import base64
import io
import pickle
from pathlib import Path
from typing import Any

import dill
import pytest
from pulumi.dynamic import Config, ConfigureRequest, ResourceProvider
from pulumi.dynamic.dynamic import serialize_provider
from pulumi.runtime._serialization import _deserialize

from components import aggregated_role_guard, membership, owner_guard, wave_gate
from lifecycle import aggregated_roles as lifecycle_roles
from lifecycle import membership as lifecycle_membership
from lifecycle import owner_guard as lifecycle_owner
from lifecycle import wave_gate as lifecycle_wave
from lifecycle import webhooks_first as lifecycle_webhooks

RECORDED = Path(__file__).parent / "recorded_providers"

# What each recorded provider names, and the inputs its diff compared, as of 7dbe179.
NAMES = {
    "wave_gate": ["components.wave_gate._Provider"],
    "aggregated_role_guard": ["components.aggregated_role_guard._Provider",
                              "components.aggregated_role_guard.settle_and_delete"],
    "aggregated_role_sweep": ["components.aggregated_role_guard._Provider",
                              "components.aggregated_role_guard.sweep"],
    "owner_guard": ["components.owner_guard._Provider"],
    "membership": ["components.membership._Provider"],
}
DIFF_KEYS = {
    "wave_gate": ("wave", "spokes", "unreachable", "changes", "timeoutSeconds", "maxFailures"),
    "aggregated_role_guard": ("id", "spoke", "role", "roles", "connection",
                              "pluginTimeoutSeconds"),
    "aggregated_role_sweep": ("id", "spoke", "role", "roles", "connection",
                              "pluginTimeoutSeconds"),
    "owner_guard": ("spoke", "owner", "anchors", "connection", "pluginTimeoutSeconds"),
    "membership": ("spokes", "groups"),
}
# What the program registers today, by the recorded file it must pickle like.
CURRENT = {
    "wave_gate": lambda: wave_gate._Provider(),
    "aggregated_role_guard": lambda: aggregated_role_guard._Provider(
        aggregated_role_guard.settle_and_delete),
    "aggregated_role_sweep": lambda: aggregated_role_guard._Provider(aggregated_role_guard.sweep),
    "owner_guard": lambda: owner_guard._Provider(),
    "membership": lambda: membership._Provider(),
}
PROPS = {"id": "x", "wave": "canary", "spoke": "spoke-1", "role": "agg", "roles": ["agg"],
         "owner": "org/knative-fleet/prod@file:///state", "anchors": ["ns/anchor"],
         "connection": {"server": "https://spoke-1:6443"}, "pluginTimeoutSeconds": 5,
         "spokes": {}, "groups": {}, "unreachable": {}, "changes": "d1",
         "timeoutSeconds": 10, "maxFailures": 0, "later": ["main"], "unlisted": "a"}


def recorded(name: str) -> str:
    return (RECORDED / f"{name}.b64").read_text().strip()


def unpickle(text: str) -> ResourceProvider:
    """As the dynamic provider's process does (pulumi.dynamic.__main__, which cannot be
    imported: it starts the provider's server)."""
    provider = _deserialize(lambda: dill.loads(base64.b64decode(text)))
    provider.configure(ConfigureRequest(config=Config(raw_config={}, project_name="p")))
    return provider


def names(text: str) -> list[str]:
    """The module-level names a pickle refers to, in order."""
    seen: list[str] = []

    class Recorder(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            seen.append(f"{module}.{name}")
            return super().find_class(module, name)

    Recorder(io.BytesIO(base64.b64decode(text))).load()
    return seen


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_recorded_provider_and_the_programs_name_the_same(name: str) -> None:
    assert names(recorded(name)) == NAMES[name]
    current = CURRENT[name]()
    assert names(serialize_provider(current)) == NAMES[name]
    assert vars(unpickle(recorded(name))) == vars(current)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_diff_compares_the_recorded_keys(name: str) -> None:
    provider = unpickle(recorded(name))
    assert not provider.diff("x", PROPS, {**PROPS, "unlisted": "b"}).changes
    for key in DIFF_KEYS[name]:
        diff = provider.diff("x", PROPS, {**PROPS, key: "changed"})
        assert diff.changes and diff.replaces == [] and not diff.delete_before_replace, key


@pytest.mark.parametrize("name", ["aggregated_role_guard", "aggregated_role_sweep",
                                  "owner_guard"])
def test_a_guard_records_its_inputs_without_reaching_the_spoke(name: str) -> None:
    provider = unpickle(recorded(name))
    created = provider.create(PROPS)
    assert created.id == "x" and created.outs == PROPS
    assert provider.update("x", PROPS, {**PROPS, "spoke": "y"}).outs == {**PROPS, "spoke": "y"}


def test_the_wave_gate_waits_on_create_and_update(monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = {"healthy": {"a": True}, "failures": {}}
    waited: list[dict[str, Any]] = []
    monkeypatch.setattr(lifecycle_wave, "await_wave", lambda p: waited.append(p) or verdict)
    provider = unpickle(recorded("wave_gate"))
    created = provider.create(PROPS)
    assert created.id == "canary" and created.outs == {**PROPS, **verdict}
    news = {**PROPS, "changes": "d2"}
    assert provider.update("canary", PROPS, news).outs == {**news, **verdict}
    assert waited == [PROPS, news]
    provider.delete("canary", PROPS)  # nothing to do on the spokes
    assert waited == [PROPS, news]


def test_the_membership_checks_in_lifecycle(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[tuple] = []

    def check(last: dict, now: dict) -> list[tuple[str, str]]:
        checked.append((last, now))
        return [("selection", "spoke 'b': SpokeDeselected")]

    monkeypatch.setattr(lifecycle_membership, "check", check)
    provider = unpickle(recorded("membership"))
    result = provider.check({"spokes": {}}, PROPS)
    assert result.inputs == PROPS and checked == [({"spokes": {}}, PROPS)]
    assert [(f.property, f.reason) for f in result.failures] == [
        ("selection", "spoke 'b': SpokeDeselected")]
    created = provider.create(PROPS)
    assert created.id == "fleet-membership" and created.outs == PROPS


@pytest.mark.parametrize(("name", "step"), [
    ("aggregated_role_guard", "settle_and_delete"), ("aggregated_role_sweep", "sweep")])
def test_an_aggregated_role_delete_runs_in_lifecycle(
        monkeypatch: pytest.MonkeyPatch, name: str, step: str) -> None:
    ran: list[dict[str, Any]] = []
    monkeypatch.setattr(lifecycle_roles, step, ran.append)
    unpickle(recorded(name)).delete("x", PROPS)
    assert ran == [PROPS]

    def fails(_props: dict[str, Any]) -> None:
        raise TimeoutError("no answer")

    monkeypatch.setattr(lifecycle_roles, step, fails)
    with pytest.raises(RuntimeError, match="^spoke 'spoke-1': could not remove agg safely: "
                       "TimeoutError: no answer. Fix: make sure the spoke and the hub are "
                       "reachable") as failed:
        unpickle(recorded(name)).delete("x", PROPS)
    assert isinstance(failed.value.__cause__, TimeoutError)


def test_the_owner_guards_delete_runs_in_lifecycle(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(lifecycle_owner, "check_owner", lambda p: ran.append(("check", p)))
    monkeypatch.setattr(lifecycle_webhooks, "delete_install_configurations",
                        lambda p: ran.append(("webhooks", p)))
    unpickle(recorded("owner_guard")).delete("x", PROPS)
    # The check first; the install's webhook configurations only once it passed.
    assert ran == [("check", PROPS), ("webhooks", PROPS)]

    def unreachable(_props: dict[str, Any]) -> None:
        raise OSError("connection refused")

    monkeypatch.setattr(lifecycle_owner, "check_owner", lambda p: None)
    monkeypatch.setattr(lifecycle_webhooks, "delete_install_configurations", unreachable)
    with pytest.raises(lifecycle_webhooks.WebhookConfigurationsLeft,
                       match="^spoke 'spoke-1': could not delete the install's webhook "
                       "configurations before their webhooks: OSError: connection refused; "
                       "nothing on the spoke was deleted"):
        unpickle(recorded("owner_guard")).delete("x", PROPS)
    ran.clear()
    monkeypatch.setattr(lifecycle_webhooks, "delete_install_configurations",
                        lambda p: ran.append(("webhooks", p)))

    refusal = lifecycle_owner.OwnedByAnotherStack("spoke 'spoke-1': stack 'b' manages it")

    def refuses(_props: dict[str, Any]) -> None:
        raise refusal

    monkeypatch.setattr(lifecycle_owner, "check_owner", refuses)
    with pytest.raises(lifecycle_owner.OwnedByAnotherStack) as refused:
        unpickle(recorded("owner_guard")).delete("x", PROPS)
    assert refused.value is refusal

    def breaks(_props: dict[str, Any]) -> None:
        raise ValueError("bad anchor")

    monkeypatch.setattr(lifecycle_owner, "check_owner", breaks)
    with pytest.raises(RuntimeError, match="^spoke 'spoke-1': could not check the owner "
                       "record before deleting its install: ValueError: bad anchor; nothing "
                       "on the spoke was deleted. Fix: make sure the spoke and the hub"):
        unpickle(recorded("owner_guard")).delete("x", PROPS)

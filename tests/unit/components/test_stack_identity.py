"""The owner id read at the program's edge, under Pulumi mocks answering the engine's
`pulumi:pulumi:readStackOutputs`: a first run makes the id, a saved one is kept, and a
read that fails stops the run naming the backend, with no new id exported."""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pytest
from pulumi.runtime.invoke import InvokeResult

from components import stack_identity
from ownership.identity import (
    BACKEND_ENV,
    OWNER_ID_OUTPUT,
    BackendUnknown,
    OutputsUnreadable,
)

BACKEND = "s3://fleet-state"
SAVED = "kf-" + "1" * 32


class Engine(pulumi.runtime.Mocks):
    """The engine's answer to readStackOutputs: `answer(name)` returns its result or
    raises (the engine's failure)."""

    def __init__(self, answer: Callable[[str], dict]) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        assert args.token == stack_identity.READ_STACK_OUTPUTS
        self.asked.append(args.args["name"])
        return self.answer(args.args["name"])


def outputs(found: dict) -> Callable[[str], dict]:
    return lambda name: {"name": name, "outputs": found, "secretOutputNames": []}


@pytest.fixture()
def exported(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """What the program exports; the backend the CLI names."""
    monkeypatch.setenv(BACKEND_ENV, BACKEND)
    seen: list[tuple[str, object]] = []
    monkeypatch.setattr(pulumi, "export", lambda key, value: seen.append((key, value)))
    return seen


def engine(answer: Callable[[str], dict]) -> Engine:
    mocks = Engine(answer)
    pulumi.runtime.set_mocks(mocks, preview=False)  # the other tests' project and stack
    return mocks


def stack() -> str:
    return f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"


def test_a_first_run_makes_the_id_and_exports_it(exported) -> None:
    mocks = engine(outputs({}))  # a stack without state answers an empty map

    owner = stack_identity.read_identity()
    stack_identity.export_identity(owner)

    assert mocks.asked == [stack()]
    assert not owner.saved and owner.id.startswith("kf-") and owner.id != SAVED
    assert owner.name == f"{stack()}@{BACKEND}"
    assert exported == [(OWNER_ID_OUTPUT, owner.id)]


def test_a_stack_whose_outputs_keep_no_owner_id_yet_makes_one(exported) -> None:
    """A first run that failed before its outputs were saved, or a stack from before ids."""
    engine(outputs({"spokes": ["edge-7"]}))

    owner = stack_identity.read_identity()

    assert not owner.saved and owner.id.startswith("kf-")


def test_the_saved_id_is_kept(exported) -> None:
    engine(outputs({OWNER_ID_OUTPUT: SAVED, "spokes": ["edge-7"]}))

    owner = stack_identity.read_identity()
    stack_identity.export_identity(owner)

    assert owner.saved and owner.id == SAVED
    assert exported == [(OWNER_ID_OUTPUT, SAVED)]


def test_a_read_that_meets_a_checkpoint_write_is_made_again(exported, monkeypatch) -> None:
    """The run's own engine rewrites a file backend's `.attrs` while the program starts."""
    monkeypatch.setattr(stack_identity, "RETRY_PAUSE_S", 0.0)
    answers = [RuntimeError("failed to load checkpoint: EOF")] * 2

    def answer(name: str) -> dict:
        if answers:
            raise answers.pop()
        return outputs({OWNER_ID_OUTPUT: SAVED})(name)

    mocks = engine(answer)
    owner = stack_identity.read_identity()
    assert owner.saved and owner.id == SAVED
    assert mocks.asked == [stack()] * 3


def unreachable(_name: str) -> dict:
    raise Exception("failed to load checkpoint: blob (code=Unknown): dial tcp: i/o timeout")


@pytest.mark.parametrize(("answer", "why"), [
    (unreachable, "i/o timeout"),
    (lambda name: {"name": name}, "no outputs"),
    (outputs({OWNER_ID_OUTPUT: "not-an-id"}), "'not-an-id', not an owner id"),
])
def test_outputs_that_cannot_be_read_stop_the_run_naming_the_backend(
        exported, monkeypatch, answer: Callable[[str], dict], why: str) -> None:
    monkeypatch.setattr(stack_identity, "RETRY_PAUSE_S", 0.0)
    mocks = engine(answer)

    with pytest.raises(OutputsUnreadable) as stopped:
        stack_identity.read_identity()

    message = str(stopped.value)
    assert BACKEND in message and stack() in message and why in message
    assert "no new owner id" in message and "Fix:" in message
    # __main__ turns a BackendUnknown into the run's error before anything is exported.
    assert isinstance(stopped.value, BackendUnknown)
    assert exported == []
    # A failed read is asked three times; an answer without outputs is no failure.
    assert len(mocks.asked) == (3 if answer is unreachable else 1)


def test_an_answer_the_engine_does_not_know_yet_stops_the_run(
        exported, monkeypatch: pytest.MonkeyPatch) -> None:
    engine(outputs({}))
    monkeypatch.setattr(pulumi.runtime, "invoke",
                        lambda *_a, **_k: InvokeResult(None, is_known=False))

    with pytest.raises(OutputsUnreadable, match="not known"):
        stack_identity.read_identity()
    assert exported == []

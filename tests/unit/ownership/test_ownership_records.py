"""The one rule of whose an install is, and the identity a stack's outputs keep."""

from __future__ import annotations

import pytest

from core.names import OWNER_ANNOTATION, OWNER_ID_ANNOTATION
from ownership.identity import (
    OWNER_ID_OUTPUT,
    OutputsUnreadable,
    identity_from_outputs,
    owner_name,
)
from ownership.records import Record, annotations_of, is_mine, others, record_of

NAME = owner_name("file:///state", "organization", "knative-fleet", "prod")
ME = identity_from_outputs({OWNER_ID_OUTPUT: "kf-" + "1" * 32}, NAME)


def test_the_outputs_keep_the_id_and_a_stack_without_one_gets_a_new_one() -> None:
    assert ME.saved and ME.id == "kf-" + "1" * 32 and ME.stack == "organization/knative-fleet/prod"
    first = identity_from_outputs({}, NAME)
    second = identity_from_outputs(None, NAME)
    assert not first.saved and first.id.startswith("kf-") and first.id != second.id
    with pytest.raises(OutputsUnreadable, match="file:///state"):  # lost, not absent
        identity_from_outputs({OWNER_ID_OUTPUT: "not-an-id"}, NAME)


def test_a_record_round_trips_through_the_anchor_annotations() -> None:
    assert record_of(annotations_of(ME)) == Record(ME.id, NAME)
    assert record_of({OWNER_ANNOTATION: NAME}) == Record(None, NAME)
    assert record_of({"operator.knative.dev/anchor": "true"}) is None
    assert record_of(None) is None


MOVED = owner_name("s3://bucket", "organization", "knative-fleet", "prod")


@pytest.mark.parametrize(("record", "mine"), [
    (None, True),  # no record: nobody's
    (Record(ME.id, NAME), True),
    (Record(ME.id, MOVED), True),  # the state moved to another backend: the id goes with it
    (Record(None, NAME), True),  # recorded before owner ids
    (Record(None, MOVED), False),  # the same stack name on another backend
    (Record("kf-" + "2" * 32, NAME), False),  # another id: a state copied, or a new stack
    (Record("kf-" + "2" * 32, MOVED), False),
])
def test_whose_an_install_is(record: Record | None, mine: bool) -> None:
    assert is_mine(record, ME) is mine


def test_a_first_run_adopts_a_record_naming_it_whatever_its_id() -> None:
    first = identity_from_outputs({}, NAME)
    assert is_mine(Record("kf-" + "2" * 32, NAME), first)
    assert not is_mine(Record("kf-" + "2" * 32, MOVED), first)


def test_others_names_only_the_foreign_records() -> None:
    foreign = Record("kf-" + "2" * 32, MOVED)
    assert others({"a/x": Record(ME.id, NAME), "b/y": foreign, "c/z": None}, ME) == {
        "b/y": foreign}
    assert annotations_of(ME) == {OWNER_ID_ANNOTATION: ME.id, OWNER_ANNOTATION: NAME}


def test_a_record_keeps_the_name_it_was_written_with_while_its_id_is_ours() -> None:
    from ownership.records import as_recorded

    kept = as_recorded(ME, {"a/x": Record(ME.id, MOVED), "b/y": None})
    assert (kept.id, kept.name, kept.saved) == (ME.id, MOVED, True)
    assert as_recorded(ME, {"a/x": Record(None, NAME)}) == ME
    assert as_recorded(ME, {"a/x": Record("kf-" + "2" * 32, MOVED)}) == ME

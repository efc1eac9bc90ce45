"""The delete side of one owner per spoke, decided from the records alone: a record of
another stack refuses the delete and says how to stop managing the spoke here or move
it; this stack's record, no record or no anchor lets it go on."""

from __future__ import annotations

import pytest

from access.owner_records import delete_refusal, stack_of, unreadable_refusal
from config.stack_owner import owner_identity

ME = owner_identity("file:///state", "organization", "knative-fleet", "prod")
OTHER = owner_identity("file:///state", "organization", "knative-fleet", "copy")
SERVING = "knative-serving/knativeserving-knative-serving-root-owner"
EVENTING = "knative-eventing/knativeeventing-knative-eventing-root-owner"
URN = "urn:pulumi:prod::knative-fleet::knative-fleet:index:Spoke::spoke-1"


@pytest.mark.parametrize("records", [
    {SERVING: ME},
    {SERVING: None},  # installed before the record existed
    {},  # no anchor to read
    {SERVING: ME, EVENTING: None},
])
def test_a_delete_goes_on_unless_another_stack_is_recorded(records: dict) -> None:
    assert delete_refusal("spoke-1", ME, records, URN) is None


def test_another_stacks_record_refuses_the_delete_naming_it_and_the_ways_on() -> None:
    message = delete_refusal("spoke-1", ME, {SERVING: ME, EVENTING: OTHER}, URN)
    assert message is not None
    assert message.startswith("spoke 'spoke-1': ")
    assert f"stack '{OTHER}' manages this spoke" in message
    assert f"ConfigMap {EVENTING}" in message and f"ConfigMap {SERVING}" not in message
    assert f"this stack is '{ME}'" in message
    assert "nothing on the spoke was deleted" in message
    assert f"pulumi state delete --target-dependents '{URN}'" in message
    assert ("python -m operations hand-over --spoke spoke-1 --from-stack "
            "organization/knative-fleet/copy --to-stack organization/knative-fleet/prod"
            in message)


def test_two_other_stacks_are_both_named() -> None:
    third = owner_identity("file:///state", "organization", "knative-fleet", "third")
    message = delete_refusal("spoke-1", ME, {SERVING: third, EVENTING: OTHER})
    assert message is not None
    assert f"'{OTHER}' and '{third}'" in message
    # Without the component's URN the fix still says which resource to drop.
    assert "pulumi state delete --target-dependents <the URN of the Spoke 'spoke-1'>" \
        in message


def test_an_anchor_the_identity_may_not_read_refuses_the_delete() -> None:
    assert unreadable_refusal("spoke-1", [], URN) is None
    message = unreadable_refusal("spoke-1", [SERVING], URN)
    assert message is not None
    assert message.startswith("spoke 'spoke-1': its identity may not get configmaps in "
                              "knative-serving")
    assert "nothing on the spoke was deleted" in message and URN in message


def test_the_stack_of_an_owner_identity() -> None:
    assert stack_of(OTHER) == "organization/knative-fleet/copy"
    assert stack_of("organization/knative-fleet/copy") == "organization/knative-fleet/copy"

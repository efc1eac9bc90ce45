"""One owner per spoke, decided by the planner: the record each install writes on its
anchors, the refusal of a spoke another stack's record is on, and of a spoke where the
Knative Operator still has a CR."""

from __future__ import annotations

import pytest

from access import Reason, SpokeFacts
from core.names import OWNER_ANNOTATION, OWNER_ID_ANNOTATION
from fleet import plan_fleet
from fleet.plan import Role, SpokePlan
from fleet.spokes import owner_refusal
from ownership.identity import StackIdentity, clean_backend_url, owner_name, stack_of
from tests.support.factories import FakeInventory, two_spoke_fleet

ME = StackIdentity("kf-" + "1" * 32,
                   owner_name("file:///state", "organization", "knative-fleet", "prod"))
OTHER = StackIdentity("kf-" + "2" * 32,
                      owner_name("file:///state", "organization", "knative-fleet", "copy"))
SERVING_ANCHOR = "knative-serving/knativeserving-knative-serving-root-owner"
EVENTING_ANCHOR = "knative-eventing/knativeeventing-knative-eventing-root-owner"


def anchors(serving: StackIdentity | str | None,
            eventing: StackIdentity | str | None = None) -> dict[str, dict[str, str]]:
    """The anchors a spoke holds, each with the owner it records (None: no record; a
    name alone: a record from before owner ids)."""
    out = {}
    for anchor, owner in ((SERVING_ANCHOR, serving), (EVENTING_ANCHOR, eventing)):
        record = ({} if owner is None else {OWNER_ANNOTATION: owner} if isinstance(owner, str)
                  else {OWNER_ANNOTATION: owner.name, OWNER_ID_ANNOTATION: owner.id})
        out[anchor] = {"operator.knative.dev/anchor": "true"} | record
    return out


def anchor_bodies(spoke: SpokePlan) -> list[dict]:
    assert spoke.install is not None
    return [o.body for c in spoke.install.components for s in c.stages for o in s.objects
            if o.role is Role.ANCHOR]


@pytest.mark.parametrize(("url", "clean"), [
    ("https://user:token@api.pulumi.com/", "https://api.pulumi.com"),
    ("https://app.pulumi.com/alice", "https://api.pulumi.com"),  # whoami's, per user
    ("s3://bucket/prefix?region=eu-west-1&profile=x", "s3://bucket/prefix"),
    ("file:///var/state", "file:///var/state"),
    ("azblob://container#frag", "azblob://container"),
    ("https://pulumi.example.com:8443/", "https://pulumi.example.com:8443"),
])
def test_the_backend_url_in_an_identity_holds_no_secret_or_query(url: str, clean: str) -> None:
    assert clean_backend_url(url) == clean
    assert owner_name(url, "acme", "knative-fleet", "prod") == (
        f"acme/knative-fleet/prod@{clean}")


def test_every_install_records_the_stack_that_plans_it() -> None:
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(), owner=ME)
    bodies = anchor_bodies(plan.spokes["spoke-a"]) + anchor_bodies(plan.spokes["spoke-b"])
    assert len(bodies) == 3  # serving and eventing on spoke-a, serving on spoke-b
    assert all(b["metadata"]["annotations"][OWNER_ANNOTATION] == ME.name for b in bodies)
    assert all(b["metadata"]["annotations"][OWNER_ID_ANNOTATION] == ME.id for b in bodies)
    # The release's own anchor annotations are kept beside it.
    assert all(b["metadata"]["annotations"]["operator.knative.dev/anchor"] == "true"
               for b in bodies)


def test_without_an_owner_nothing_is_recorded_or_checked() -> None:
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(
        facts={"a": SpokeFacts({}, {}, anchors=anchors(OTHER))}))
    assert plan.spokes["spoke-a"].install is not None
    assert all(OWNER_ANNOTATION not in b["metadata"]["annotations"]
               for b in anchor_bodies(plan.spokes["spoke-a"]))


MOVED = StackIdentity(ME.id, owner_name("s3://new-home", "organization", "knative-fleet",
                                        "prod"))


@pytest.mark.parametrize("found", [
    {}, anchors(None), anchors(ME), anchors(ME, None), anchors(None, ME), anchors(ME.name),
    anchors(MOVED)],
    ids=["fresh", "installed-before-the-record", "ours", "ours-and-unrecorded",
         "unrecorded-and-ours", "ours-before-owner-ids", "ours-before-a-backend-move"])
def test_a_spoke_without_another_record_is_claimed(found: dict) -> None:
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(
        facts={"a": SpokeFacts({}, {}, anchors=found)}), owner=ME)
    spoke = plan.spokes["spoke-a"]
    assert spoke.error is None and plan.failure is None
    assert all(b["metadata"]["annotations"][OWNER_ID_ANNOTATION] == ME.id
               for b in anchor_bodies(spoke))


def test_a_spoke_another_stack_owns_is_refused_and_the_rest_converges() -> None:
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(
        facts={"a": SpokeFacts({}, {}, anchors=anchors(ME, OTHER))}), owner=ME)
    refused = plan.spokes["spoke-a"]
    assert refused.install is None and refused.error is not None
    assert refused.error.reason is Reason.SPOKE_OWNED_BY_ANOTHER_STACK
    text = str(refused.error)
    assert f"stack '{OTHER}' manages this spoke" in text
    assert OTHER.id in text
    assert f"ConfigMap {EVENTING_ANCHOR}" in text and SERVING_ANCHOR not in text
    assert ("python -m operations hand-over --spoke spoke-a --from-stack "
            "organization/knative-fleet/copy --to-stack organization/knative-fleet/prod"
            ) in text
    assert "nothing on the spoke was changed" in text
    assert plan.spokes["spoke-b"].install is not None
    assert "spoke-a (SpokeOwnedByAnotherStack)" in (plan.failure or "")


def test_one_stack_name_on_another_backend_is_another_owner() -> None:
    elsewhere = owner_name("s3://other-bucket", "organization", "knative-fleet", "prod")
    for record in (elsewhere, StackIdentity("kf-" + "3" * 32, elsewhere)):
        error = owner_refusal("s", SpokeFacts({}, {}, anchors=anchors(record)), ME)
        assert error is not None and error.reason is Reason.SPOKE_OWNED_BY_ANOTHER_STACK
    assert stack_of(elsewhere) == "organization/knative-fleet/prod"


def test_a_new_stack_of_the_same_name_on_the_same_backend_is_refused_once_it_has_an_id(
        ) -> None:
    """A stack's first run (no id saved yet) adopts a record naming it: a first run that
    failed before saving its id; a stack with a saved id does not."""
    earlier = StackIdentity("kf-" + "4" * 32, ME.name)
    found = SpokeFacts({}, {}, anchors=anchors(earlier))
    assert owner_refusal("s", found, StackIdentity(ME.id, ME.name, saved=False)) is None
    assert owner_refusal("s", found, ME) is not None


def test_a_spoke_the_knative_operator_runs_is_refused_naming_each_cr() -> None:
    crs = ("KnativeEventing knative-eventing/knative-eventing",
           "KnativeServing team-a/serving")
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(
        facts={"a": SpokeFacts({}, {}, operator_crs=crs)}), owner=ME)
    error = plan.spokes["spoke-a"].error
    assert error is not None and error.reason is Reason.KNATIVE_OPERATOR_ACTIVE
    assert all(cr in error.message for cr in crs)
    assert "Taking over a spoke the Knative Operator runs" in str(error)
    assert plan.spokes["spoke-b"].install is not None


def test_a_refused_pre_check_read_is_an_access_denial() -> None:
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(facts={"a": SpokeFacts(
        {}, {}, unreadable=("list knativeservings.operator.knative.dev",))}), owner=ME)
    error = plan.spokes["spoke-a"].error
    assert error is not None and error.reason is Reason.SPOKE_ACCESS_DENIED
    assert "may not list knativeservings.operator.knative.dev" in error.message


def test_a_spoke_whose_anchor_is_being_deleted_is_refused_naming_it() -> None:
    anchor = "knative-serving/knativeserving-knative-serving-root-owner"
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(facts={"a": SpokeFacts(
        {}, {}, anchors={anchor: {}},
        anchors_deleting={anchor: "2026-12-02T15:00:00Z"})}), owner=ME)
    error = plan.spokes["spoke-a"].error
    assert error is not None and error.reason is Reason.ANCHOR_BEING_DELETED
    assert f"{anchor} (since 2026-12-02T15:00:00Z) is being deleted" in error.message
    assert "spoke 'spoke-a'" in str(error) and "pulumi up --refresh" in str(error)
    assert plan.spokes["spoke-a"].install is None
    assert plan.spokes["spoke-b"].install is not None

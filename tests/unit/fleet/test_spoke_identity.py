"""The planner's check that a spoke's credentials are for the identity its plan binds
Secret reads to (fleet.spoke_identity)."""

from __future__ import annotations

import pytest

from access.spoke_facts import SpokeFacts
from core.reasons import Reason
from fleet.spoke_identity import as_identity, identity_refusal, is_identity, reads_secrets

SA = "ServiceAccount:kube-system/knative-fleet-spoke"
SA_USER = "system:serviceaccount:kube-system:knative-fleet-spoke"
READS_ALL = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
WRITES_ONLY = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["patch"],
                "resourceNames": ["webhook-certs"]}]


def facts(username: str | None, rules: list[dict] | None,
          groups: tuple[str, ...] = ()) -> SpokeFacts:
    return SpokeFacts(namespaces={}, installed={}, rules=READS_ALL, rules_elsewhere=rules,
                      identity=None if username is None else (username, groups))


@pytest.mark.parametrize("text,username,groups,want", [
    (SA, SA_USER, (), True),
    (SA, "system:serviceaccount:kube-system:other", (), False),
    ("User:ci", "ci", (), True),
    ("User:ci", "system:serviceaccount:ci:x", (), False),
    ("Group:fleet-deployers", "alice", ("system:authenticated", "fleet-deployers"), True),
    ("Group:fleet-deployers", "fleet-deployers", (), False),
])
def test_an_identity_names_the_user_or_one_of_its_groups(
        text: str, username: str, groups: tuple[str, ...], want: bool) -> None:
    assert is_identity(text, username, groups) is want


def test_a_user_name_is_written_back_as_spoke_identity_names_it() -> None:
    assert as_identity(SA_USER) == SA
    assert as_identity("arn:aws:iam::1:role/fleet") == "User:arn:aws:iam::1:role/fleet"


def test_reads_of_every_secret_need_all_three_verbs_on_any_name() -> None:
    assert reads_secrets(READS_ALL)
    assert reads_secrets([{"apiGroups": [""], "resources": ["secrets"],
                           "verbs": ["get", "list", "watch"]}])
    assert not reads_secrets([{"apiGroups": [""], "resources": ["secrets"],
                               "verbs": ["get", "list"]}])
    assert not reads_secrets([{"apiGroups": [""], "resources": ["secrets"],
                               "verbs": ["get", "list", "watch"], "resourceNames": ["a"]}])
    assert not reads_secrets(WRITES_ONLY)


def test_credentials_for_another_identity_without_secret_reads_are_refused_with_the_fix(
        ) -> None:
    """Refused although its rules in the install namespaces read Secrets: there they
    come from the plan's bindings of the last run, which this run would rebind."""
    other = "system:serviceaccount:kube-system:eks-fleet"
    refusal = identity_refusal("spoke-1", SA, facts(other, WRITES_ONLY))
    assert refusal is not None and refusal.reason is Reason.SPOKE_ACCESS_DENIED
    assert refusal.spoke == "spoke-1"
    assert f"its credentials are for {other}" in refusal.message
    assert f"binds Secret reads in the install namespaces to {SA}" in refusal.message
    assert "nothing on the spoke was changed" in refusal.message
    assert "Set spokeIdentity: ServiceAccount:kube-system/eks-fleet" in refusal.message


@pytest.mark.parametrize("spoke_facts", [
    facts(SA_USER, WRITES_ONLY),              # the named identity
    facts("kubernetes-admin", READS_ALL),     # another, which reads Secrets anyway
    facts(None, WRITES_ONLY),                 # a spoke that cannot say who
    facts("someone", None),                   # nor what it may do
], ids=["named", "reads-anyway", "no-self-review", "rules-unknown"])
def test_no_refusal_where_the_reads_hold_or_the_spoke_cannot_say(
        spoke_facts: SpokeFacts) -> None:
    assert identity_refusal("spoke-1", SA, spoke_facts) is None

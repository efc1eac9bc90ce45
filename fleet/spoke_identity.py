"""Whether a spoke's credentials are for the identity the plan binds Secret reads to
(`spokeIdentity`, knative.secret_reads). If they are for another one that reads no Secrets
of its own, the provider could not read the Secrets it manages: a refresh fails and a
Secret's deletion waits out its timeout. The planner refuses such a spoke before anything
on it changes, and says which identity to name."""

from __future__ import annotations

from collections.abc import Iterable

from access import ResolutionError
from access.spoke_facts import SpokeFacts
from config.identity import subject_of
from core.reasons import Reason
from fleet.rights import READ_VERBS, SECRETS, Right, missing_rights


def is_identity(text: str, username: str, groups: Iterable[str]) -> bool:
    """Whether `text` (config.identity) names the user `username` or one of its groups."""
    subject = subject_of(text)
    if subject["kind"] == "ServiceAccount":
        return username == f"system:serviceaccount:{subject['namespace']}:{subject['name']}"
    if subject["kind"] == "User":
        return username == subject["name"]
    return subject["name"] in set(groups)


def as_identity(username: str) -> str:
    """A user name as `spokeIdentity` names it."""
    prefix = "system:serviceaccount:"
    if username.startswith(prefix) and username.count(":") == 3:
        namespace, name = username[len(prefix):].split(":")
        return f"ServiceAccount:{namespace}/{name}"
    return f"User:{username}"


def reads_secrets(rules: list[dict]) -> bool:
    """Whether `rules` (a rules review's) read every Secret without naming one."""
    return not missing_rights({Right(*SECRETS, verb) for verb in READ_VERBS}, rules)


def identity_refusal(spoke: str, identity: str, facts: SpokeFacts) -> ResolutionError | None:
    """SpokeAccessDenied when the credentials are for another identity than `identity`
    and read no Secrets without the plan's bindings (judged where the fleet binds nothing:
    an installed spoke's bindings still name the identity the last run bound); None when
    the spoke cannot say."""
    if facts.identity is None or facts.rules_elsewhere is None:
        return None
    username, groups = facts.identity
    if is_identity(identity, username, groups) or reads_secrets(facts.rules_elsewhere):
        return None
    return ResolutionError(spoke, Reason.SPOKE_ACCESS_DENIED, (
        f"its credentials are for {username}, but the plan binds Secret reads in the "
        f"install namespaces to {identity} (spokeIdentity), so it could not read the "
        f"Secrets it manages; nothing on the spoke was changed. Set spokeIdentity: "
        f"{as_identity(username)} (the stack's knative-fleet:spokeIdentity, or the "
        f"entry's or group's) and print the rights again"))

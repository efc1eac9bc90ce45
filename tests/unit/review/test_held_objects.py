"""What a change of a holding step does to each object it holds, as the review names it:
a cluster-RBAC step's objects by `Kind/name` (a ClusterRole and its binding of the same
name told apart), created, updated, removed, reapplied after drift, and a binding whose
roleRef changed replaced; a CRDs-first step's CRDs by their name."""

from __future__ import annotations

from typing import Any

from core import crd_manifest
from review.held_objects import crd_changes, held_bodies, kind_key, object_changes


def role(name: str, verbs: tuple[str, ...] = ("get",)) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": list(verbs)}]}


def binding(name: str, role_name: str = "r", subject: str = "controller") -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role_name},
            "subjects": [{"kind": "ServiceAccount", "name": subject,
                          "namespace": "knative-serving"}]}


def state(bodies: list[dict], drifted: list[dict] | None = None) -> dict[str, Any]:
    """A step's state as the preview gives it: the bodies packed in its inputs, the
    objects a refresh found drifted in its outputs."""
    _, manifest = crd_manifest.encode(bodies)
    outputs: dict[str, Any] = {"objects": [kind_key(b) for b in bodies]}
    if drifted is not None:
        outputs["drifted"] = drifted
    return {"inputs": {"manifest": manifest}, "outputs": outputs}


def test_a_new_step_creates_each_object_named_by_kind_and_name() -> None:
    assert object_changes({}, state([role("x"), binding("x")])) == (
        ("created", "ClusterRole/x"), ("created", "ClusterRoleBinding/x"))


def test_created_updated_and_removed_objects_are_named() -> None:
    old = state([role("a"), role("b"), binding("c")])
    new = state([role("a"), role("b", verbs=("get", "list")), role("d")])
    assert object_changes(old, new) == (  # in the order of their keys
        ("updated", "ClusterRole/b"), ("created", "ClusterRole/d"),
        ("removed", "ClusterRoleBinding/c"))


def test_an_unchanged_step_changes_nothing() -> None:
    assert object_changes(state([role("a"), binding("a")]),
                        state([role("a"), binding("a")])) == ()


def test_a_binding_whose_role_ref_changed_is_replaced_one_whose_subjects_did_updated() -> None:
    old = state([binding("x", role_name="r"), binding("y")])
    new = state([binding("x", role_name="other"), binding("y", subject="someone")])
    assert object_changes(old, new) == (("replaced", "ClusterRoleBinding/x"),
                                      ("updated", "ClusterRoleBinding/y"))


def test_the_drifted_objects_are_reapplied_once() -> None:
    """A drifted object the change updates anyway is named once, as updated."""
    drifted = [{"name": "ClusterRole/a", "change": "changed"},
               {"name": "ClusterRoleBinding/a", "change": "deleted"},
               {"name": "ClusterRole/b", "change": "changed"}]
    old = state([role("a"), binding("a"), role("b")], drifted)
    new = state([role("a"), binding("a"), role("b", verbs=("*",))])
    assert object_changes(old, new) == (
        ("updated", "ClusterRole/b"), ("reapplied", "ClusterRole/a"),
        ("reapplied", "ClusterRoleBinding/a"))


def test_a_role_and_a_binding_of_the_same_name_are_told_apart() -> None:
    old = state([role("x"), binding("x", role_name="x")])
    new = state([role("x"), binding("x", role_name="x", subject="webhook")])
    assert object_changes(old, new) == (("updated", "ClusterRoleBinding/x"),)
    assert object_changes(old, state([role("x")])) == (("removed", "ClusterRoleBinding/x"),)


def test_a_new_state_without_bodies_names_nothing() -> None:
    old = state([role("a")])
    assert object_changes(old, {"inputs": {}}) == ()
    assert object_changes(old, {"inputs": {"manifest": "not a manifest"}}) == ()


def test_the_bodies_of_a_state_are_read_back_and_none_when_unknown() -> None:
    assert held_bodies(state([role("a"), binding("b")])) == [role("a"), binding("b")]
    assert held_bodies({}) == [] and held_bodies({"inputs": {"manifest": "?"}}) == []


def test_a_crds_first_steps_crds_are_named_by_their_name() -> None:
    def crd(name: str, group: str = "x") -> dict:
        return {"kind": "CustomResourceDefinition", "metadata": {"name": name},
                "spec": {"group": group}}

    old = state([crd("a.x"), crd("b.x")], [{"name": "a.x", "change": "deleted"}])
    assert crd_changes(old, state([crd("a.x"), crd("b.x", "y"), crd("c.x")])) == (
        ("updated", "b.x"), ("created", "c.x"), ("reapplied", "a.x"))


def refreshed(bodies: list[dict], drifted: list[dict]) -> dict[str, Any]:
    """A step's state after a saved refresh found drift: its inputs rewritten from its
    outputs, which keep the names and the digest, not the bodies."""
    digest, _ = crd_manifest.encode(bodies)
    outputs = {"objects": [kind_key(b) for b in bodies], "digest": digest, "drifted": drifted}
    return {"inputs": {k: v for k, v in outputs.items()}, "outputs": outputs}


def with_digest(bodies: list[dict]) -> dict[str, Any]:
    new = state(bodies)
    new["inputs"]["digest"] = crd_manifest.encode(bodies)[0]
    return new


def test_after_a_saved_refresh_the_drifted_are_reapplied_not_created() -> None:
    bodies = [role("a"), binding("b")]
    old = refreshed(bodies, [{"name": "ClusterRole/a", "change": "changed"}])
    assert object_changes(old, with_digest(bodies)) == (("reapplied", "ClusterRole/a"),)


def test_after_a_saved_refresh_a_changed_release_updates_what_it_held_and_names_the_rest(
        ) -> None:
    old = refreshed([role("a"), binding("b")], [])
    new = with_digest([role("a", verbs=("list",)), role("c")])
    assert object_changes(old, new) == (
        ("updated", "ClusterRole/a"), ("created", "ClusterRole/c"),
        ("removed", "ClusterRoleBinding/b"))


def test_an_updated_object_shows_its_own_fields_not_the_manifest() -> None:
    from review.held_objects import held_field_changes

    old = state([role("a"), binding("b")])
    new = state([role("a", verbs=("get", "list")), binding("b")])
    changes = held_field_changes(old, new, kind_key)
    assert [(c.path, c.kind) for c in changes] == [
        ('["ClusterRole/a"].rules[0].verbs[1]', "add")]
    assert held_field_changes(old, old, kind_key) == []

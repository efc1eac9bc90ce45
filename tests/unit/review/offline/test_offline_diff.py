"""One object's planned inputs against its inputs in the last state, as the engine and
pulumi-kubernetes decide its step."""

from __future__ import annotations

from review.offline.diff import comparable, keys_step, object_step, with_ignored
from review.offline.state import HIDDEN

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def deployment(cpu: str = "1", env_value: str | None = "x", replicas: int = 1,
               annotations: dict | None = None) -> dict:
    env = {"name": "K_SINK_TIMEOUT", **({"value": env_value} if env_value is not None else {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "n", "annotations": annotations or {
                "pulumi.com/patchForce": "true"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "d"}},
                     "template": {"spec": {"containers": [{
                         "name": "c", "env": [env],
                         "resources": {"limits": {"cpu": cpu, "memory": "2Gi"}}}]}}}}


def test_the_providers_respellings_are_no_change() -> None:
    old = deployment(cpu="1", env_value=None)
    new = deployment(cpu="1000m", env_value="")
    new["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "2048Mi"
    new["metadata"]["creationTimestamp"] = None
    assert object_step(DEPLOYMENT, old, new)[0] == "same"


def test_a_real_change_is_an_update_with_the_engines_paths() -> None:
    op, effective, detailed = object_step(DEPLOYMENT, deployment(), deployment(replicas=2))
    assert op == "update"
    assert detailed == {"spec.replicas": {"kind": "update", "inputDiff": True}}
    assert effective["spec"]["replicas"] == 2


def test_ignore_changes_paths_keep_the_old_value_or_stay_absent() -> None:
    path = "spec.template.spec.containers[0].env[0].value"
    old, new = deployment(env_value="live"), deployment(env_value="release")
    assert object_step(DEPLOYMENT, old, new, ["spec.replicas", path])[0] == "same"
    assert with_ignored(deployment(env_value=None), new, [path])["spec"]["template"][
        "spec"]["containers"][0]["env"][0] == {"name": "K_SINK_TIMEOUT"}
    assert object_step(DEPLOYMENT, old, new)[0] == "update"


def test_only_the_providers_own_pulumi_annotations_are_ignored() -> None:
    ours = deployment(annotations={"pulumi.com/patchForce": "true"})
    theirs = deployment(annotations={"pulumi.com/patchForce": "true",
                                     "pulumi.com/autonamed": "true"})
    assert comparable(theirs) == comparable(ours)
    skip = deployment(annotations={"pulumi.com/patchForce": "true",
                                   "pulumi.com/skipAwait": "true"})
    assert object_step(DEPLOYMENT, ours, skip)[0] == "update"


def test_fields_kubernetes_cannot_change_in_place_force_a_replace() -> None:
    old, new = deployment(), deployment()
    new["spec"]["selector"]["matchLabels"]["app"] = "e"
    op, _, detailed = object_step(DEPLOYMENT, old, new)
    assert op == "replace"
    assert detailed["spec.selector.matchLabels.app"]["kind"] == "update-replace"
    binding = {"roleRef": {"name": "a"}, "subjects": []}
    assert object_step("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", binding,
                       {**binding, "roleRef": {"name": "b"}})[0] == "replace"


def test_an_object_the_state_lacks_is_created() -> None:
    assert object_step(DEPLOYMENT, None, deployment())[0] == "create"


def test_dynamic_resources_compare_their_keys_and_hidden_secrets_compare_equal() -> None:
    keys = ("wave", "connection")
    old = {"wave": "a", "connection": HIDDEN, "healthy": {"x": True}}
    assert keys_step(keys, old, {"wave": "a", "connection": {"server": "s"}})[0] == "same"
    op, detailed = keys_step(keys, old, {"wave": "b", "connection": {}})
    assert (op, list(detailed)) == ("update", ["wave"])
    assert keys_step(("id",), {"id": "a"}, {"id": "b"}, replacing=("id",))[0] == "replace"

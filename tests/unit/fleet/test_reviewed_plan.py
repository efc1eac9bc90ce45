"""The reviewed plan is the plan that lands: the program's digests of its plan are the
same for the same inputs, and move, naming the part and in it the objects and settings,
when the stack file, a ClusterProfile's labels, a release file or a spoke change; a
review binds to its stack, and one without per-object detail still refuses."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from config.fleet import parse_fleet_config
from core.reasons import Reason
from fleet import plan_fleet
from fleet.reviewed import (
    SHOWN_OBJECTS,
    differences,
    part_detail,
    plan_digest,
    refusal,
    reviewed_digest,
)
from knative import plan as knative_plan
from knative import release_fetch
from lab.paths import RELEASES
from tests.support.factories import FakeInventory, profile, reviewed_fleet, reviewed_profiles


def config(release_base: str = f"file://{RELEASES}", **serving: object) -> dict:
    return reviewed_fleet(release_base, **serving)


PROFILES = reviewed_profiles()


def digest_of(cfg: dict, profiles: list[dict] = PROFILES, stack: str = "prod"):
    return plan_digest(plan_fleet(parse_fleet_config(cfg), FakeInventory(profiles)), stack)


def report(d, stack: str = "prod") -> dict:
    return {"stack": stack, "plan": d.to_json()}


def test_the_same_inputs_give_the_same_digest_and_it_survives_json():
    d = digest_of(config())
    assert d == digest_of(config())
    assert sorted(d.parts) == ["fleet", "spoke a", "spoke b", "spoke solo"]
    again = reviewed_digest(json.loads(json.dumps(report(d))), "prod")
    assert again.digest == d.digest
    assert refusal(report(d), d, "r.json") is None


def test_a_stack_file_change_is_named_by_the_spokes_and_objects_it_changes():
    reviewed = digest_of(config())
    fresh = digest_of(config(config={"network": {"domain-template": "x"}}))
    assert differences(reviewed, fresh) == [
        "planned otherwise than reviewed: spoke a",
        "  changed object: ConfigMap knative-serving/config-network",
        "planned otherwise than reviewed: spoke b",
        "  changed object: ConfigMap knative-serving/config-network"]
    why = refusal(report(reviewed), fresh, "r.json")
    assert why and "nothing was registered or changed" in why
    assert ("\n  planned otherwise than reviewed: spoke a\n"
            "    changed object: ConfigMap knative-serving/config-network\n") in why


def test_a_relabelled_cluster_profile_is_refused():
    reviewed = digest_of(config())
    relabelled = [profile("a", env="prod"), profile("b", env="staging"), profile("solo")]
    assert differences(reviewed, digest_of(config(), relabelled)) == [
        "planned otherwise than reviewed: the fleet's membership, waves or gates",
        "  changed: the membership: which ClusterProfiles are selected, and their labels",
        "  changed: the waves, their spokes or their gates (the stack file or "
        "ClusterProfile labels)",
        "reviewed, no longer planned: spoke b"]
    again = digest_of(config(), [*relabelled, profile("c", env="prod")])
    assert "not reviewed: spoke c (new in this run)" in differences(reviewed, again)


EXTRA = ("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
         "  namespace: knative-serving\ndata: {a: b}\n")


def test_a_changed_release_file_is_refused(tmp_path: Path):
    mirror = tmp_path / "mirror"
    shutil.copytree(RELEASES, mirror)
    reviewed = digest_of(config(f"file://{mirror}"))
    core = next(mirror.rglob("serving-core.yaml"))
    core.chmod(0o644)
    release_fetch.load_documents.cache_clear()  # a new run reads the file anew
    knative_plan._RENDER_CACHE.clear()
    core.write_text(core.read_text() + EXTRA)
    fresh = digest_of(config(f"file://{mirror}"))
    # Both spokes of the group run Serving 1.23 from that file; "solo" runs 1.22.
    assert differences(reviewed, fresh) == [
        "planned otherwise than reviewed: spoke a",
        "  added object: ConfigMap knative-serving/extra",
        "planned otherwise than reviewed: spoke b",
        "  added object: ConfigMap knative-serving/extra"]
    assert differences(fresh, reviewed)[1] == "  removed object: ConfigMap knative-serving/extra"


def test_the_providers_configuration_is_part_of_it():
    reviewed = digest_of(config())
    cfg = config()
    cfg["pluginTimeoutSeconds"] = 61
    lines = differences(reviewed, digest_of(cfg))
    assert lines[:2] == [
        "planned otherwise than reviewed: spoke a",
        "  changed: its connection or its Kubernetes provider's configuration (the "
        "ClusterProfile, the access-provider file or the stack file)"]
    assert len(lines) == 6, lines  # the same for spokes a, b and solo, and nothing else


class UpgradedSpokes(FakeInventory):
    """Every spoke answers with another Kubernetes version than the review's."""

    def reach(self, spoke: str, namespace: str, name: str, install_namespaces: Any) -> Any:
        return dataclasses.replace(super().reach(spoke, namespace, name, install_namespaces),
                                   server_version="v1.37.0")


def test_a_spoke_that_answers_with_another_version_is_named():
    reviewed = digest_of(config())
    fresh = plan_digest(plan_fleet(parse_fleet_config(config()), UpgradedSpokes(PROFILES)),
                        "prod")
    assert differences(reviewed, fresh)[:2] == [
        "planned otherwise than reviewed: spoke a",
        "  changed: the Kubernetes version the spoke answers with"]


def test_a_version_change_names_the_first_objects_and_counts_the_rest():
    reviewed, fresh = digest_of(config()), digest_of(config(version="1.22"))
    lines = differences(reviewed, fresh)
    a = lines[:lines.index("planned otherwise than reviewed: spoke b")]
    assert a[0] == "planned otherwise than reviewed: spoke a"
    assert ("  changed: the Knative versions planned for it (the stack file, or what the "
            "spoke runs now)") in a
    assert len([line for line in a if " object: " in line]) == SHOWN_OBJECTS
    every = [line for line in part_detail("spoke a", reviewed, fresh, shown=1000)
             if " object: " in line]
    assert len(every) > SHOWN_OBJECTS
    assert a[-1] == f"  and {len(every) - SHOWN_OBJECTS} more objects"


def test_an_unreached_spoke_says_so():
    reviewed = digest_of(config())
    fresh = plan_digest(plan_fleet(parse_fleet_config(config()),
                                   FakeInventory(PROFILES, broken={
                                       "solo": Reason.REMOTE_CLIENT_CREATION_FAILED})),
                        "prod")
    solo = part_detail("spoke solo", reviewed, fresh)
    assert "changed: whether it is reached, or why not" in solo
    assert any(line.startswith("removed object: ") for line in solo), solo


def test_a_report_without_per_object_detail_still_refuses_naming_the_spoke():
    reviewed = digest_of(config())
    old = report(reviewed)
    del old["plan"]["detail"]
    fresh = digest_of(config(config={"network": {"domain-template": "x"}}))
    why = refusal(old, fresh, "r.json")
    assert why and "nothing was registered or changed" in why
    assert ("  planned otherwise than reviewed: spoke a\n"
            "    the review predates per-object detail") in why
    assert refusal(old, reviewed, "r.json") is None  # the parts alone bind the run
    odd = report(reviewed)
    odd["plan"]["detail"] = {"spoke a": "not a mapping", "spoke b": {"objects": []}}
    lines = differences(reviewed_digest(odd, "prod"), fresh)
    assert lines[1].startswith("  the review predates per-object detail"), lines
    assert lines[3].startswith("  the review predates per-object detail"), lines


def test_the_detail_survives_json_and_is_keyed_by_kind_namespace_and_name():
    d = digest_of(config())
    doc = json.loads(json.dumps(report(d)))
    objects = doc["plan"]["detail"]["spoke a"]["objects"]
    assert "ConfigMap knative-serving/config-network" in objects
    assert "Namespace knative-serving" in objects
    assert set(doc["plan"]["detail"]["spoke a"]["settings"]) == {
        "placement", "connection", "kubernetes", "versions", "reached", "install"}
    assert reviewed_digest(doc, "prod") == d
    assert doc["plan"]["digest"] == report(d)["plan"]["digest"]


def test_a_review_binds_to_its_stack():
    d = digest_of(config())
    assert refusal(report(d), d, "r.json") is None
    assert refusal({"stack": "prod", "plan": d.to_json()}, digest_of(config(), stack="o/p/prod"),
                   "r.json") is None
    other = refusal(report(d, stack="staging"), d, "r.json")
    assert other and "the review of stack 'staging', not 'prod'" in other
    no_stack = refusal({"plan": d.to_json()}, d, "r.json")
    assert no_stack and "the review of stack None" in no_stack
    offline = refusal({"stack": "prod", "offline": {}}, d, "r.json")
    assert offline and "records no plan" in offline


@pytest.mark.parametrize("changed", ["stack", "parts"])
def test_a_tampered_report_does_not_pass(changed: str):
    d = digest_of(config())
    doc = report(d)
    if changed == "stack":
        doc["plan"]["stack"] = "other"
    else:
        doc["plan"]["parts"]["spoke a"] = "sha256:0"
    assert refusal(doc, d, "r.json")

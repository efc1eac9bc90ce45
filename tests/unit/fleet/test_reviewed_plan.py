"""The reviewed plan is the plan that lands: the program's digests of its plan are the
same for the same inputs, and move, naming the part, when the stack file, a
ClusterProfile's labels, a release file or a spoke's provider configuration change; a
review binds to its stack."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from config.fleet import parse_fleet_config
from fleet import plan_fleet
from fleet.reviewed import differences, plan_digest, refusal, reviewed_digest
from knative import plan as knative_plan
from knative import release_fetch
from lab.paths import RELEASES
from tests.support.factories import FakeInventory, profile


def config(release_base: str = f"file://{RELEASES}", **serving: object) -> dict:
    return {"releaseBase": release_base,
            "groups": [{"name": "g", "namespace": "f", "selector": {"matchLabels": {
                "env": "prod"}}, "serving": {"version": "1.23", **serving}}],
            "fleet": [{"name": "solo", "clusterProfileRef": {"name": "solo",
                                                             "namespace": "f"},
                       "serving": {"version": "1.22"}}]}


PROFILES = [profile("a", env="prod"), profile("b", env="prod"), profile("solo")]


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


def test_a_stack_file_change_is_named_by_the_spokes_it_changes():
    reviewed = digest_of(config())
    fresh = digest_of(config(config={"network": {"domain-template": "x"}}))
    assert differences(reviewed, fresh) == [
        "planned otherwise than reviewed: spoke a", "planned otherwise than reviewed: spoke b"]
    why = refusal(report(reviewed), fresh, "r.json")
    assert why and "nothing was registered or changed" in why and "spoke a" in why


def test_a_relabelled_cluster_profile_is_refused():
    reviewed = digest_of(config())
    relabelled = [profile("a", env="prod"), profile("b", env="staging"), profile("solo")]
    lines = differences(reviewed, digest_of(config(), relabelled))
    assert "reviewed, no longer planned: spoke b" in lines
    assert "planned otherwise than reviewed: the fleet's membership, waves or gates" in lines


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
    lines = differences(reviewed, digest_of(config(f"file://{mirror}")))
    assert lines and all(line.startswith("planned otherwise than reviewed: spoke")
                         for line in lines), lines


def test_the_providers_configuration_is_part_of_it():
    reviewed = digest_of(config())
    cfg = config()
    cfg["pluginTimeoutSeconds"] = 61
    assert differences(reviewed, digest_of(cfg))


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

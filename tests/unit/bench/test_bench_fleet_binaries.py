"""The fleet section on both sets of Pulumi binaries: each stack runs the CLI and Pulumi
home of the set it is asked for, each set's measurements land under its own keys (the
released set's under the headline keys), and kubectl's baseline runs once per run."""

from __future__ import annotations

import importlib
import stat
from pathlib import Path
from typing import Any

import pytest

from bench.commands import BenchError
from bench.fleet import results
from bench.metrics import RssPeak, Samples
from bench.own_lab import BenchLab, BenchStack
from bench.section import Options, Run
from core.settings import Binaries
from lab.handle import Cluster, Lab
from lab.paths import LabDir
from lab.toolchain import pulumi_bin, pulumi_home

# The module, not the package's `measure` function of the same name.
fleet = importlib.import_module("bench.fleet.measure")


def fake_cli(where: Path, name: str) -> None:
    """A `pulumi` that says which set it is, whatever it is asked."""
    where.mkdir(parents=True, exist_ok=True)
    cli = where / "pulumi"
    cli.write_text(f"#!/bin/sh\necho 'v3.259.0 ({name})'\n")
    cli.chmod(cli.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    """A lab with nothing running, whose toolchain has a CLI of each set."""
    toolchain = tmp_path / "toolchain" / "bin"
    fake_cli(pulumi_bin(toolchain, "patched"), "patched")
    fake_cli(pulumi_bin(toolchain, "released"), "released")
    return Lab(hub=Cluster("hub", ""), spokes=(), provider_file="", bin=toolchain, raw={},
               dir=LabDir(tmp_path / ".lab-bench"))


@pytest.fixture
def bench(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> BenchLab:
    """The section's lab driver, its lab already up."""
    driver = BenchLab(lab.dir.root)
    driver._lab = lab
    monkeypatch.setattr(BenchLab, "up", lambda self, spokes: lab)
    return driver


@pytest.mark.parametrize("binaries", ["released", "patched"])
def test_a_stack_runs_the_binaries_it_is_asked_for(bench: BenchLab, lab: Lab,
                                                   binaries: Binaries) -> None:
    stack = bench.stack("x", binaries=binaries)
    assert stack.binaries == binaries
    assert stack.env["PATH"].split(":")[0] == str(pulumi_bin(lab.bin, binaries))
    assert stack.env["PULUMI_HOME"] == str(pulumi_home(lab.bin, binaries))
    facts = fleet.binaries_facts(bench, {binaries: stack})
    assert facts == {f"binaries_{binaries}_pulumi_version": f"v3.259.0 ({binaries})"}


def test_a_stack_not_told_runs_the_setting(bench: BenchLab, lab: Lab,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNATIVE_FLEET_BINARIES", "patched")
    assert bench.stack("x").binaries == "patched"
    monkeypatch.delenv("KNATIVE_FLEET_BINARIES")
    stack = bench.stack("y")
    assert stack.binaries == "released"
    assert stack.env["PULUMI_HOME"] == str(pulumi_home(lab.bin, "released"))


def test_a_set_without_its_own_cli_is_refused(bench: BenchLab, lab: Lab) -> None:
    (pulumi_bin(lab.bin, "released") / "pulumi").unlink()
    stack = bench.stack("x", binaries="released")  # PATH falls through to the patched CLI
    with pytest.raises(BenchError, match="released Pulumi CLI is not at"):
        fleet.binaries_facts(bench, {"released": stack})


@pytest.fixture
def steps(bench: BenchLab, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every measurement the section takes, recorded; each set's install a figure of its
    own (released 10 s, patched 8 s) against kubectl's 5 s."""
    taken: list[tuple[Any, ...]] = []

    def fleet_run(bench: BenchLab, stack: BenchStack, samples: Samples, run_no: int,
                  lead: bool = True) -> None:
        taken.append(("fleet", run_no, stack.binaries, lead))
        samples.add("install_fleet_s", {"released": 10.0, "patched": 8.0}[stack.binaries])
        samples.flags["noop_preview_clean"].append(True)
        samples.rss["install"].append(RssPeak({"total": 1}))
        samples.notes.events.setdefault("install", None)

    def kubectl_run(bench: BenchLab, base: object, samples: Samples, run_no: int) -> None:
        taken.append(("kubectl", run_no))
        samples.add("install_kubectl_s", 5.0)

    monkeypatch.setattr(fleet, "fleet_run", fleet_run)
    monkeypatch.setattr(fleet, "kubectl_run", kubectl_run)
    monkeypatch.setattr(fleet, "growth_run", lambda bench, stack, samples, run_no:
                        taken.append(("growth", run_no, stack.binaries)))
    monkeypatch.setattr(fleet, "program_run", lambda bench, samples, run_no: None)
    monkeypatch.setattr(fleet, "with_test_tools", lambda: taken.append(("test-tools",)))
    monkeypatch.setattr(fleet, "render_baseline", lambda entry, base: None)
    monkeypatch.setattr("bench.section.machine_facts", lambda toolchain, env: {})
    monkeypatch.setattr(fleet, "engine_settings", lambda options, stack: {})
    return taken


def measured(bench: BenchLab, options: Options) -> tuple[Run, dict[str, Any]]:
    run = Run(options, bench)
    fleet.measure(run)
    return run, results(run)


def test_each_run_measures_both_sets_released_first_against_one_kubectl(
        bench: BenchLab, steps: list[tuple[Any, ...]]) -> None:
    run, out = measured(bench, Options(runs=2, quick=True))
    assert steps == [("test-tools",),
                     ("fleet", 1, "released", True), ("fleet", 1, "patched", False),
                     ("kubectl", 1),
                     ("kubectl", 2),
                     ("fleet", 2, "released", True), ("fleet", 2, "patched", False)]
    assert [s.binaries for s in bench.stacks] == ["released", "patched"]
    assert out["binaries"] == "released,patched"
    assert (out["install_fleet_s"], out["patched_install_fleet_s"]) == (10.0, 8.0)
    assert (out["install_ratio"], out["patched_install_ratio"]) == (2.0, 1.6)
    assert out["target_install_ratio"] == "MISS"  # judged on the released set
    assert out["patched_noop_preview_clean"] is True
    assert set(run.samples.rss) == {"install", "patched_install"}
    assert run.facts["binaries_released_pulumi_version"] == "v3.259.0 (released)"
    assert run.facts["binaries_patched_pulumi_version"] == "v3.259.0 (patched)"


def test_the_growth_runs_on_the_released_set(bench: BenchLab,
                                             steps: list[tuple[Any, ...]]) -> None:
    measured(bench, Options(runs=1))
    assert steps[-1] == ("growth", 1, "released")


def test_one_set_only(bench: BenchLab, steps: list[tuple[Any, ...]]) -> None:
    _, out = measured(bench, Options(runs=1, binaries=("released",)))
    assert ("test-tools",) not in steps  # the patched binaries are not needed
    assert [s for s in steps if s[0] == "fleet"] == [("fleet", 1, "released", True)]
    assert steps[-1] == ("growth", 1, "released")
    assert out["binaries"] == "released" and out["install_ratio"] == 2.0
    assert out.get("patched_install_ratio") is None


def test_the_patched_set_only(bench: BenchLab, steps: list[tuple[Any, ...]]) -> None:
    _, out = measured(bench, Options(runs=1, binaries=("patched",)))
    assert steps[0] == ("test-tools",)  # the patched binaries are the tests' tools
    assert [s for s in steps if s[0] == "fleet"] == [("fleet", 1, "patched", True)]
    assert steps[-1] == ("growth", 1, "patched")
    assert out["binaries"] == "patched" and out["patched_install_ratio"] == 1.6
    assert out["install_ratio"] is None and out["target_install_ratio"] is None


@pytest.mark.parametrize(("asked", "expected"), [
    (None, ("released", "patched")),
    (("patched", "released"), ("released", "patched")),  # the headline set first
    (("released",), ("released",)),
])
def test_the_sets_measured(asked: tuple[Binaries, ...] | None,
                           expected: tuple[Binaries, ...]) -> None:
    assert fleet.binaries(Options(binaries=asked)) == expected

"""One error tree: every error class of the product derives from FleetError, one class
per name, each drawn in core.errors' docstring; the modules that raised their own keep
their import names."""

from __future__ import annotations

import ast
import importlib

import pytest

from core import errors
from lab.paths import REPO

# The product's packages (lab/ and bench/ are tools, tests/ are tests).
PACKAGES = ("access", "components", "config", "core", "drift", "fleet", "knative",
            "lifecycle", "models", "operations", "ownership", "review", "rollout",
            "runner", "sdk_speedups", "targeting")
# Outside the tree on purpose (core.errors says why), or not this change's to move.
OUTSIDE = {
    "runner.plan.Interrupted",  # a Ctrl-C carrying the results so far, not a failure
}


def _modules_with_classes() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if path.name == "__main__.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(isinstance(node, ast.ClassDef) for node in ast.walk(tree)):
                parts = path.relative_to(REPO).with_suffix("").parts
                found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def _error_classes() -> dict[str, type[BaseException]]:
    """Every exception class the product defines, by `module.Name`."""
    classes = {}
    for name in _modules_with_classes():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, BaseException)
                    and value.__module__ == name):
                classes[f"{name}.{value.__qualname__}"] = value
    return classes


@pytest.fixture(scope="module")
def classes() -> dict[str, type[BaseException]]:
    return _error_classes()


def test_every_product_error_is_a_fleet_error(classes) -> None:
    assert len(classes) > 20
    stray = [name for name, cls in classes.items()
             if name not in OUTSIDE and not issubclass(cls, errors.FleetError)]
    assert stray == []


def test_one_class_per_name_each_drawn_in_the_tree(classes) -> None:
    tree = errors.__doc__ or ""
    names: dict[str, list[str]] = {}
    for name in classes:
        if name not in OUTSIDE:
            names.setdefault(name.rsplit(".", 1)[1], []).append(name)
    assert {n: where for n, where in names.items() if len(where) > 1} == {}
    assert [n for n in names if n not in tree] == []
    for name in OUTSIDE:
        assert name.rsplit(".", 1)[1] in tree or name.startswith("fleet.reviewed"), name


def test_the_merged_errors_keep_their_import_names() -> None:
    from runner import selection, worker

    assert selection.SelectionError is errors.SelectionError
    assert worker.NotReviewed is errors.NotReviewed
    assert issubclass(errors.SelectionError, ValueError)  # as the runner's was


@pytest.mark.parametrize(("branch", "leaves"), [
    ("ConfigError", ["core.settings.SettingsError", "fleet.planner.InventoryUnavailable"]),
    ("BackendUnknown", ["ownership.identity.OutputsUnreadable"]),
    ("OwnershipError", ["ownership.errors.OwnedByAnotherStack",
                        "ownership.errors.HeldByAnotherRun", "ownership.errors.OwnerUnknown"]),
    ("StepError", ["lifecycle.crds_first.CrdsNotApplied",
                   "lifecycle.webhooks_first.WebhookConfigurationsLeft"]),
    ("Refused", ["runner.worker.RolledBack", "runner.rollback.RollbackRefused",
                 "operations.hand_over.HandOverRefused", "core.errors.NotReviewed"]),
])
def test_each_branch_holds_its_leaves(classes, branch: str, leaves: list[str]) -> None:
    base = next(cls for name, cls in classes.items() if name.endswith(f".{branch}"))
    assert all(issubclass(classes[leaf], base) for leaf in leaves), leaves

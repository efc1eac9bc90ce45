"""The one provider of the program's dynamic resources: create, diff and update by the
diff keys of the resource's kind (core.resource_types), with hooks for what differs.
What a step does (wait for a wave, refuse a delete, free an aggregated role's name) is
in lifecycle/.

Pulumi keeps each dynamic resource's provider object in the stack state (`pulumi.dynamic`
pickles it with dill, by reference: the module and name of its class, then the instance's
`__dict__`), and `pulumi destroy` unpickles the provider of the *old* state to call its
delete. A provider class therefore keeps its module and name for as long as a state may
hold them, and unpickling never calls `__init__`: a provider's behaviour lives on its
class, and an instance holds only what the old states' instances hold too (the
aggregated-role guard's `on_delete`).

The engine starts the dynamic provider and unpickles these classes in every preview, in
its one-at-a-time step loop before the spokes' objects: a provider whose lifecycle module
loads the Kubernetes client imports it only inside the step that needs it, so that
start does not pay for the client (about 0.1 s).
"""

from __future__ import annotations

import operator
import site
from pathlib import Path
from typing import Any, ClassVar

from pulumi.dynamic import CreateResult, DiffResult, ReadResult, ResourceProvider, UpdateResult

from core.resource_types import DynamicKind

# Where the providers' modules are found when the engine starts the dynamic provider in
# another project's directory (the package's Fleet, called from a YAML program, say);
# None in the program, whose directory is this repository.
_IMPORT_ROOT: str | None = None


def importable_from(root: Path) -> None:
    """Every provider pickled from now on first puts `root` on the unpickling process's
    path (site.addsitedir), then names its class as before."""
    global _IMPORT_ROOT
    _IMPORT_ROOT = str(root)


class _Call:
    """Pickles as the call `func(*args)`: no class of this module is named in the pickle."""

    def __init__(self, func: Any, args: tuple) -> None:
        self.reduced = (func, args)

    def __reduce__(self) -> Any:
        return self.reduced


class _Reduced:
    """Pickles as the reduction it holds."""

    def __init__(self, reduced: Any) -> None:
        self.reduced = reduced

    def __reduce__(self) -> Any:
        return self.reduced


class DynamicProvider(ResourceProvider):
    """Create and update record the inputs (`outs`); diff reports an update when one of
    the kind's diff keys changed, never a replacement."""

    kind: ClassVar[DynamicKind]

    def __reduce_ex__(self, protocol: Any) -> Any:
        """As any object, unless importable_from was called: then the pickle is
        `(site.addsitedir(root), provider)[1]`, so the root is on the path before the
        provider's class is looked up."""
        if _IMPORT_ROOT is None:
            return super().__reduce_ex__(protocol)
        # Protocol 1's reduction (copyreg._reconstructor): one that names the class
        # itself, not `copyreg.__newobj__`, which pickle allows only at the top.
        pair = (_Call(site.addsitedir, (_IMPORT_ROOT,)), _Reduced(super().__reduce_ex__(1)))
        return operator.getitem, (pair, 1)

    def resource_id(self, props: dict[str, Any]) -> str:
        """The id the resource is created with."""
        return str(props["id"])

    def outs(self, props: dict[str, Any]) -> dict[str, Any]:
        """What create and update leave in the state: the inputs as they are."""
        return props

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=self.resource_id(props), outs=self.outs(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [k for k in self.kind.diff_keys if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=self.outs(news))


class GuardProvider(DynamicProvider):
    """A guard: only its delete talks to the spoke. A delete that fails says which spoke,
    what was left as it was and the way on, as a RuntimeError Pulumi reports; the engine
    then deletes nothing that depends on the guard."""

    def delete_step(self, props: dict[str, Any]) -> None:
        """The lifecycle step the delete runs."""
        raise NotImplementedError

    def delete_failed(self, props: dict[str, Any], exc: Exception) -> str | None:
        """The message the failed step is reported with; None: `exc` already speaks to
        the user and is raised as it is."""
        raise NotImplementedError

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        try:
            self.delete_step(props)
        except Exception as exc:
            message = self.delete_failed(props, exc)
            if message is None:
                raise
            raise RuntimeError(message) from exc


class HoldingProvider(DynamicProvider):
    """A step that applies objects to its spoke and holds them (a CRDs-first,
    cluster-RBAC or namespaced-objects step): its inputs hold the bodies once
    (`manifest`), its outputs the names and a digest of what it applied to each; a
    refresh names what drifted. The lifecycle steps are its subclass's."""

    def apply(self, props: dict[str, Any]) -> dict[str, Any]:
        """The objects applied; returns what the state records of them."""
        raise NotImplementedError

    def read_drift(self, props: dict[str, Any]) -> list[dict[str, str]]:
        """The objects whose applied fields changed, or that are gone."""
        raise NotImplementedError

    def outs(self, props: dict[str, Any]) -> dict[str, Any]:
        """The inputs without the bodies: the state holds them once, as inputs."""
        return {k: v for k, v in props.items() if k != "manifest"}

    def create(self, props: dict[str, Any]) -> CreateResult:
        recorded = self.apply(props)
        return CreateResult(id_=self.resource_id(props), outs={**self.outs(props), **recorded})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update also when a refresh found drift (in the state, or in the inputs a
        refresh gives back)."""
        result = super().diff(_id, olds, news)
        if olds.get("drifted") or news.get("drifted"):
            return DiffResult(changes=True, replaces=[], delete_before_replace=False)
        return result

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """A refresh: the outputs as they were, with the objects that drifted. With drift,
        the inputs say so too: the engine reports a refresh as a change (`update`, what
        `make drift` reads) only when the inputs it gets back differ; the next `up`
        registers the program's inputs again."""
        drifted = self.read_drift(props)
        outs = {**props, "drifted": drifted}
        if not drifted:
            return ReadResult(id_=id_, outs=outs)
        inputs = {k: v for k, v in props.items() if k not in ("applied", "selector")}
        return ReadResult(id_=id_, outs=outs, inputs={**inputs, "drifted": drifted})

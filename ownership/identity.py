"""The stack's owner identity: what a spoke's record names.

The id is made once, on the stack's first run, and kept in the stack's state (the stack
output `ownerId`), so it travels with the state: `pulumi stack export`/`import` into
another backend, a checkout moved on a `file://` backend, `pulumi stack rename` keep it,
and a new stack, even one of the same name on another backend, gets another. The name
`organization/project/stack@backend` is kept beside it for people; it is also what an
install recorded before ids existed names, and what a stack whose id is not saved yet
(a new stack, or one whose first run failed before the end) is recognised by.

Only a stack whose outputs keep no `ownerId` gets a new id. Outputs that cannot be read,
or an `ownerId` that is no owner id, stop the run: a new id would make the stack a
stranger to the spokes it owns.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from core.errors import FleetError

# The stack output that keeps the id in the stack's state.
OWNER_ID_OUTPUT = "ownerId"
# The Pulumi CLI takes the backend from this variable before its `pulumi login` record.
BACKEND_ENV = "PULUMI_BACKEND_URL"
ID_PREFIX = "kf-"


class BackendUnknown(FleetError):
    """The state backend cannot be told, or not read; `str()` says how to fix it."""


class OutputsUnreadable(BackendUnknown):
    """The stack's outputs, where its owner id is kept, cannot be read from its backend."""


@dataclass(frozen=True)
class StackIdentity:
    """One stack as a spoke's record names it."""

    id: str
    name: str  # organization/project/stack@backend
    saved: bool = True  # the id was read from the stack's state (False: made for this run)

    @property
    def stack(self) -> str:
        """`organization/project/stack`: what the Pulumi CLI's `--stack` takes."""
        return stack_of(self.name)

    def __str__(self) -> str:
        return f"{self.name} (owner id {self.id})"


def new_id() -> str:
    """A new owner id: random, so no two stacks share one unless a state is copied."""
    return ID_PREFIX + uuid.uuid4().hex


def stack_of(name: str) -> str:
    """The `organization/project/stack` part of an owner name."""
    return name.rsplit("@", 1)[0] if "@" in name else name


def backend_of(name: str) -> str:
    """The backend part of an owner name (cleaned: it holds no secret)."""
    return name.rsplit("@", 1)[1] if "@" in name else ""


def clean_backend_url(url: str) -> str:
    """The backend URL without what may hold a secret or differ between the people who
    run one stack: userinfo, query, fragment, a trailing slash; for a Pulumi Cloud
    backend (http/https) the host alone, its API's (`pulumi whoami` names the console,
    app.<domain>/<user>, where PULUMI_BACKEND_URL names api.<domain>)."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    if parts.scheme in ("http", "https"):
        if host.startswith("app."):
            host = "api." + host[len("app."):]
        return urlunsplit((parts.scheme, host, "", "", ""))
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def owner_name(backend_url: str, organization: str, project: str, stack: str) -> str:
    """`organization/project/stack@backend`, e.g.
    `acme/knative-fleet/prod@https://api.pulumi.com`."""
    return f"{organization}/{project}/{stack}@{clean_backend_url(backend_url)}"


def backend_url(env: dict[str, str] | None = None, cwd: str | None = None) -> str:
    """The state backend the Pulumi CLI uses here: `PULUMI_BACKEND_URL` when set (the
    CLI passes its environment to the program), else `pulumi whoami --json`'s `url`."""
    env = dict(os.environ if env is None else env)
    if env.get(BACKEND_ENV):
        return env[BACKEND_ENV]
    proc = subprocess.run(["pulumi", "whoami", "--json", "--non-interactive"], cwd=cwd,
                          env=env, capture_output=True, text=True, check=False, timeout=60)
    if proc.returncode != 0:
        raise BackendUnknown(f"cannot tell which state backend this stack is on (pulumi "
                             f"whoami --json): {proc.stderr.strip() or proc.stdout.strip()}. "
                             f"Fix: log in to the backend, or set {BACKEND_ENV}")
    return json.loads(proc.stdout)["url"]


def outputs_unreadable(name: str, why: str, fix: str | None = None) -> OutputsUnreadable:
    """The error of a run that cannot tell its stack's owner id from its outputs."""
    stack, backend = stack_of(name), backend_of(name)
    fix = fix or (f"make the backend answer (`pulumi stack output --stack {stack} --json` "
                  f"must list the outputs: log in to {backend} again or set {BACKEND_ENV}, "
                  f"check the network and the backend's credentials), then run again")
    return OutputsUnreadable(
        f"cannot read the owner id of stack {stack} (its output {OWNER_ID_OUTPUT!r}) from its "
        f"state backend {backend}: {why}. The run stopped before changing anything and made "
        f"no new owner id: one would make this stack a stranger to the spokes it owns. "
        f"Fix: {fix}")


def identity_from_outputs(outputs: dict | None, name: str) -> StackIdentity:
    """The identity a stack's outputs keep, or a new one when they keep no `ownerId` (the
    stack's first run; None: it has no outputs yet). An `ownerId` that is no owner id
    raises OutputsUnreadable: the stack's own id is lost, not absent."""
    outputs = outputs or {}
    if OWNER_ID_OUTPUT not in outputs:
        return StackIdentity(new_id(), name, saved=False)
    saved = outputs[OWNER_ID_OUTPUT]
    if isinstance(saved, str) and saved.startswith(ID_PREFIX):
        return StackIdentity(saved, name, saved=True)
    raise outputs_unreadable(
        name, f"its {OWNER_ID_OUTPUT!r} output is {saved!r}, not an owner id ({ID_PREFIX}...)",
        fix="restore the output from a backup of the state (`pulumi stack export`, "
            "`pulumi stack import`), or remove it for the stack's next run to make a new "
            "one (docs/architecture.md, the identity)")

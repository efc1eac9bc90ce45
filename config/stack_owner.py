"""Which stack manages a spoke: the owner identity each install records on its spoke.

Two stacks that select one ClusterProfile (overlapping selectors, a copied stack file,
one stack name on two backends) would otherwise overwrite each other's objects, and
one's destroy would remove what the other manages. The identity names the state
backend, the organization, the project and the stack, so it is the same on every run
of one stack and differs between any two. It is computed once, at the program's edge
(`__main__.py`, `python -m operations hand-over`), and handed to the planner as a string.
"""

from __future__ import annotations

import json
import os
import subprocess
from urllib.parse import urlsplit, urlunsplit

from core.errors import ConfigError

# The Pulumi CLI takes the backend from this variable before its `pulumi login` record.
BACKEND_ENV = "PULUMI_BACKEND_URL"


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


def owner_identity(backend_url: str, organization: str, project: str, stack: str) -> str:
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
        raise ConfigError(f"cannot tell which state backend this stack is on (pulumi whoami "
                          f"--json): {proc.stderr.strip() or proc.stdout.strip()}. Fix: log "
                          f"in to the backend, or set {BACKEND_ENV}")
    return json.loads(proc.stdout)["url"]


def program_owner() -> str:
    """This program's identity, from the engine's organization, project and stack."""
    import pulumi

    return owner_identity(backend_url(), pulumi.get_organization(), pulumi.get_project(),
                          pulumi.get_stack())

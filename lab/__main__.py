"""`python -m lab [--dir DIR] up|status|dump|down`: the local fleet lab (kubetest's
up/dump/down), in `.lab/` unless DIR names another (the benchmark's is `.lab-bench/`)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import yaml
from kubernetes import client

from lab import register
from lab.clusters import Kwok, answers, write_json
from lab.paths import LAB_DIR_ENV, REPO, LabDir, lab_dir
from lab.spoke_role import lab_role_documents
from lab.toolchain import bin_dir, tool_env, webhook_commands
from lab.webhooks import service as webhook_host

HUB = "hub"


def spoke_names(count: int) -> list[str]:
    return [f"spoke-{i}" for i in range(1, count + 1)]


def load_lab(where: LabDir) -> dict | None:
    return json.loads(where.description.read_text()) if where.description.exists() else None


def up(where: LabDir, spokes: int, webhooks: bool = False) -> dict:
    """`webhooks`: the lab runs Knative's webhooks and webhook admission (lab.webhooks); a
    lab keeps the mode it was brought up with until `down`."""
    where.root.mkdir(parents=True, exist_ok=True)
    if webhooks:
        where.webhooks.mkdir(parents=True, exist_ok=True)
        (where.webhooks / "enabled").touch()
    bin_path = bin_dir(build=True)
    commands = webhook_commands(build=True) if where.webhooks_on else None
    kwok = Kwok(bin_path, tool_env(bin_path), where)
    names = [HUB, *spoke_names(spokes)]
    lab = load_lab(where)
    _remove_clusters_of_another_mode(kwok, names)
    existing = set(kwok.clusters())
    if lab:
        _remove_extra_spokes(kwok, lab, spokes)
        existing = set(kwok.clusters())
    if lab and {s["name"] for s in lab["spokes"]} == set(spoke_names(spokes)):
        stopped = [n for n in names if n in existing and not answers(str(kwok.kubeconfig_path(n)))]
        for name in stopped:
            kwok.start(name)
        if all(n in existing for n in names) and all(
            answers(str(kwok.kubeconfig_path(n))) for n in names
        ):
            if commands is not None:
                webhook_host.start(where, commands)
            apply_spoke_rights(kwok, bin_path, spoke_names(spokes))
            print(f"lab: already up ({', '.join(names)}); spoke rights applied",
                  file=sys.stderr)
            return lab
    timings: dict[str, float] = {}
    start = time.monotonic()
    for name in names:
        if name in existing and answers(str(kwok.kubeconfig_path(name))):
            continue
        if name in existing:
            kwok.delete(name)
        timings[name] = round(kwok.create(name), 1)
        print(f"lab: cluster {name} up in {timings[name]}s", file=sys.stderr)
    if commands is not None:
        webhook_host.start(where, commands)
    if set(timings) - {HUB}:
        forget_state(where, "a spoke it describes was created anew")
    hub_kc = kwok.kubeconfig_path(HUB)
    register.install_clusterprofile_crd(register.api_client(hub_kc))
    role = lab_role_documents(register.SPOKE_SA, register.SPOKE_SA_NAMESPACE, bin_path)
    for name in spoke_names(spokes):
        register.register_spoke(hub_kc, kwok.kubeconfig_path(name), name, role_docs=role)
    provider_path = where.providers
    write_json(provider_path, register.provider_file(bin_path, hub_kc))
    lab = {
        "hub": {"name": HUB, "kubeconfig": str(hub_kc)},
        "spokes": [
            {"name": n, "kubeconfig": str(kwok.kubeconfig_path(n)),
             "clusterProfile": {"namespace": register.PROFILE_NAMESPACE, "name": n}}
            for n in spoke_names(spokes)
        ],
        "providerFile": str(provider_path),
        "bin": str(bin_path),
        "startSeconds": round(time.monotonic() - start, 1),
        "clusterStartSeconds": timings,
    }
    write_json(where.description, lab)
    print(f"lab: up in {lab['startSeconds']}s; described in {where.description}",
          file=sys.stderr)
    return lab


def apply_spoke_rights(kwok: Kwok, bin_path: Path, spokes: list[str]) -> None:
    """The current derivation of the lab identity's policy and role on every spoke, so a
    lab brought up by an older checkout runs the tests under this one's."""
    docs = lab_role_documents(register.SPOKE_SA, register.SPOKE_SA_NAMESPACE, bin_path)
    for name in spokes:
        register.apply_rbac(register.api_client(kwok.kubeconfig_path(name)), docs)


def _remove_clusters_of_another_mode(kwok: Kwok, names: list[str]) -> None:
    """A cluster made with webhook admission in the other mode than the lab's now (its
    egress configuration says which) is made anew."""
    for name in names:
        if name in kwok.clusters() and kwok.egress_config(name).exists() != kwok.lab.webhooks_on:
            print(f"lab: cluster {name} was made in the other webhook mode; making it anew",
                  file=sys.stderr)
            kwok.delete(name)


def _remove_extra_spokes(kwok: Kwok, lab: dict, spokes: int) -> None:
    """`up --spokes N` leaves exactly N spokes: the ones after spoke-N go, with their
    ClusterProfiles (a test that needs more spokes adds them and takes them away)."""
    keep = set(spoke_names(spokes))
    extra = [s["name"] for s in lab["spokes"] if s["name"] not in keep]
    hub_kc = kwok.kubeconfig_path(HUB)
    for name in extra:
        if answers(str(hub_kc)):
            register.unregister_spoke(hub_kc, name)
        kwok.delete(name)
        print(f"lab: spoke {name} removed", file=sys.stderr)


def status(where: LabDir) -> int:
    lab = load_lab(where)
    if not lab:
        shown = (where.description.relative_to(REPO)
                 if where.description.is_relative_to(REPO) else where.description)
        print(f"lab: down (no {shown})")
        return 1
    ok = True
    for entry in [lab["hub"], *lab["spokes"]]:
        alive = answers(entry["kubeconfig"])
        ok &= alive
        server = yaml.safe_load(Path(entry["kubeconfig"]).read_text())["clusters"][0]["cluster"]
        print(f"{entry['name']:10} {'up' if alive else 'DOWN':5} {server['server']}")
    return 0 if ok else 1


def dump(where: LabDir, out: Path) -> None:
    lab = load_lab(where)
    bin_path = Path(lab["bin"]) if lab else bin_dir(build=False)
    kwok = Kwok(bin_path, tool_env(bin_path), where)
    out.mkdir(parents=True, exist_ok=True)
    for name in kwok.clusters():
        kwok.dump(name, out)
        kubeconfig = kwok.kubeconfig_path(name)
        if answers(str(kubeconfig)):
            api = register.api_client(kubeconfig)
            events = client.CoreV1Api(api).list_event_for_all_namespaces(_request_timeout=20)
            rows = [
                f"{e.last_timestamp or e.event_time} {e.type} {e.involved_object.kind}/"
                f"{e.involved_object.namespace}/{e.involved_object.name} {e.reason}: {e.message}"
                for e in events.items
            ]
            (out / name / "events.txt").write_text("\n".join(rows) + "\n")
    print(f"lab: dumped logs and events to {out}", file=sys.stderr)


def forget_state(where: LabDir, why: str) -> None:
    """Removes the lab's stack state once the clusters it describes are gone: kept, the
    next `make demo` would take objects on the new spokes for present (a no-op that
    installs nothing) or fail to update what is not there."""
    if where.state.exists():
        shutil.rmtree(where.state)
        print(f"lab: removed the stacks' state in {where.state} ({why})", file=sys.stderr)


def down(where: LabDir) -> None:
    lab = load_lab(where)
    bin_path = Path(lab["bin"]) if lab else bin_dir(build=False)
    kwok = Kwok(bin_path, tool_env(bin_path), where)
    names = [HUB, *[s["name"] for s in lab["spokes"]]] if lab else []
    webhook_host.stop(where)
    for name in kwok.clusters():
        if name in names or not lab:
            kwok.delete(name)
    where.description.unlink(missing_ok=True)
    (where.webhooks / "enabled").unlink(missing_ok=True)
    forget_state(where, "its clusters were deleted")
    print("lab: down", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__)
    parser.add_argument("--dir", type=Path, default=None,
                        help=f"the lab's directory (default: ${LAB_DIR_ENV}, else .lab/)")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", help="start (or check) a hub and exactly N spokes")
    p_up.add_argument("--spokes", type=int, default=2)
    p_up.add_argument("--webhooks", action="store_true",
                      help="run Knative's webhooks with webhook admission on "
                      "(docs/lab-webhooks.md)")
    sub.add_parser("status", help="show the clusters")
    p_dump = sub.add_parser("dump", help="collect component logs and events")
    p_dump.add_argument("--out", type=Path, default=None,
                        help="where the logs go (default: the lab's dump/)")
    sub.add_parser("down", help="delete the clusters this lab created")
    sub.add_parser("webhooks", help="run the lab's webhook host in the foreground "
                   "(`up` starts it in the background)")
    args = parser.parse_args(argv)
    where = lab_dir(args.dir)
    if args.cmd == "up":
        up(where, args.spokes, webhooks=args.webhooks)
        return 0
    if args.cmd == "status":
        return status(where)
    if args.cmd == "dump":
        dump(where, args.out or where.dump)
        return 0
    if args.cmd == "webhooks":
        from lab.webhooks.host import run
        webhook_host.stop(where)
        return run(where.root, webhook_commands(build=True, tests=True))
    down(where)
    return 0


if __name__ == "__main__":
    sys.exit(main())

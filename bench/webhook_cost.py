"""`python -m bench.webhook_cost [--dir LAB] [--seconds N]`: what Knative's webhooks cost
the lab, per spoke: each webhook process the lab's webhook host runs, its resident memory
and CPU seconds since it started (start-up: certificates, informers, the reconcile of its
configurations) and over N idle seconds, then the host itself. Read with psutil from the
processes the host started (its children); run it on a lab with Knative installed."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import psutil

from lab.paths import lab_dir
from lab.webhooks import service

MB = 1024 * 1024


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.webhook_cost", description=__doc__)
    parser.add_argument("--dir", type=Path, default=None, help="the lab (default: .lab/)")
    parser.add_argument("--seconds", type=float, default=60.0, help="the idle window")
    args = parser.parse_args(argv)
    where = lab_dir(args.dir)
    pid = service.running_pid(where)
    if pid is None:
        print(f"no webhook host runs for {where.root}: `python -m lab up` starts it",
              file=sys.stderr)
        return 1
    host = psutil.Process(pid)
    children = host.children()
    if not children:
        print("the host runs no webhook: install Knative on the lab first", file=sys.stderr)
        return 1
    start = {p.pid: _cpu(p) for p in [host, *children]}
    time.sleep(args.seconds)
    print(f"{'process':58} {'RSS MB':>7} {'CPU s since start':>18} {'CPU s idle':>11}")
    rows = []
    for proc in children:
        cmd = proc.cmdline()
        kubeconfig = next((c for c in cmd if c.endswith(".kubeconfig")), "")
        spoke = Path(kubeconfig).parent.name
        name = f"{spoke}/{Path(kubeconfig).stem}"
        rows.append((spoke, proc.memory_info().rss / MB, _cpu(proc), _cpu(proc) - start[proc.pid]))
        print(f"{name:58} {rows[-1][1]:7.1f} {rows[-1][2]:18.2f} {rows[-1][3]:11.3f}")
    for spoke in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == spoke]
        print(f"{spoke + ': ' + str(len(mine)) + ' webhooks':58} {sum(r[1] for r in mine):7.1f} "
              f"{sum(r[2] for r in mine):18.2f} {sum(r[3] for r in mine):11.3f}")
    print(f"{'host (proxy and reconcile loop)':58} {host.memory_info().rss / MB:7.1f} "
          f"{_cpu(host):18.2f} {_cpu(host) - start[pid]:11.3f}")
    print(f"idle window: {args.seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

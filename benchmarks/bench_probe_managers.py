"""What Start's probe of the managers costs: N real `fio --server` processes on 127.0.0.2.., probed one after
another (the old way) and by build_endpoints (at once, PROBES_AT_ONCE at a time), alternating, R rounds.

    python benchmarks/bench_probe_managers.py [--hosts 64] [--rounds 3] [--silent 10] [--timeout 5]

Prints the median wall time of each way and their ratio, measured in the same run. ``--silent K`` adds K
managers on listeners that accept and never answer, each at the end of the plan behind the answering ones
(one after another, a refusal then costs every answering probe plus one timeout; at once, about one timeout).
Also ``--delay`` (s): each answering server is reached through a relay that holds its answers that long (a far
host), which is what makes the old way slow outside this machine. The settings file used is a temporary one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("FIOMETER_SETTINGS_DIR", tempfile.mkdtemp(prefix="fiometer-bench-settings-"))

from app.engine.run.managers import ManagerError, build_endpoints, remote_endpoint  # noqa: E402
from tests.fio_servers import fio_servers  # noqa: E402
from tests.helpers import grid  # noqa: E402


def serial(plan, timeout: float) -> None:
    """What build_endpoints did before: one probe after another, stopping at the first failure."""
    for m in plan.managers:
        assert m.host is not None
        remote_endpoint(m.name, m.host, timeout)


def timed(fn) -> float:
    t = time.monotonic()
    with contextlib.suppress(ManagerError):
        fn()
    return time.monotonic() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--silent", type=int, default=0, help="managers that accept and never answer")
    ap.add_argument("--timeout", type=float, default=5.0, help="probe timeout (s)")
    ap.add_argument("--delay", type=float, default=0.0, help="answers held this long (s) by a relay")
    args = ap.parse_args()

    gen = fio_servers()
    start = next(gen)
    listeners: list[socket.socket] = []
    links = []
    try:
        t = time.monotonic()
        servers = [start(f"127.0.{1 + i // 250}.{2 + i % 250}")[:2] for i in range(args.hosts)]
        print(f"{args.hosts} fio servers up in {time.monotonic() - t:.1f} s; load {os.getloadavg()[0]:.1f}")
        addresses = [f"{h}:{p}" for h, p in servers]
        if args.delay:
            from tests.probe_peers import SlowLink

            links = [SlowLink(h, (h, p), args.delay) for h, p in servers]
            addresses = [link.address for link in links]
        for _ in range(args.silent):
            sock = socket.create_server(("127.0.3.2", 0), backlog=8)
            listeners.append(sock)
            addresses.append(f"127.0.3.2:{sock.getsockname()[1]}")
        plan = grid(len(addresses), 1, 1)
        for m, address in zip(plan.managers, addresses, strict=True):
            m.host = address
        for m in plan.managers[: args.hosts]:  # each server's protocol learnt (and saved) once, beforehand
            assert m.host is not None
            remote_endpoint(m.name, m.host, args.timeout)
        old, new = [], []
        for _ in range(args.rounds):
            old.append(timed(lambda: serial(plan, args.timeout)))
            new.append(timed(lambda: build_endpoints(plan, timeout=args.timeout)))
        o, n = statistics.median(old), statistics.median(new)
        print(
            f"{args.hosts} answering + {args.silent} silent managers, timeout {args.timeout:g} s, "
            f"delay {args.delay:g} s, {args.rounds} rounds; load {os.getloadavg()[0]:.1f}"
        )
        print(f"  one after another: median {o:.2f} s  ({', '.join(f'{x:.2f}' for x in old)})")
        print(f"  at once (build_endpoints): median {n:.2f} s  ({', '.join(f'{x:.2f}' for x in new)})")
        print(f"  ratio: {o / n:.1f}x")
    finally:
        for link in links:
            link.close()
        for sock in listeners:
            sock.close()
        gen.close()


if __name__ == "__main__":
    main()

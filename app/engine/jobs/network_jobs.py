"""Iometer's network workers on fio's ``net`` engine (TCP).

An Iometer network worker is a *server* on its manager; each of its network targets is a NIC on a partner
manager, where Iometer creates the matching *client* worker. In fio terms, for every active (server worker,
network target) of a step, one job on each of the two managers:

- fio's TCP jobs move data one way per job, so the direction is the spec's majority: % reads of 50 or more
  means the server receives (Iometer's "read") and the client sends, otherwise the reverse;
- the **receiving** side always listens (``listen``) and the sending side connects to it (``hostname``) on the
  pair's port, ``startdelay`` seconds later, so the listener is ready whichever manager fio starts first
  (should it not be, the sender fails to connect, and the step fails in fio's words);
- the sender ends by its run time (``time_based``); the receiver ends when the sender's connection closes,
  and its own run time, ``startdelay`` + ``RECEIVER_MARGIN_S`` longer, is only a bound. The order matters:
  fio 3.33's TCP sender whose receiver has gone loops on the failing ``send()`` for ever — it ignores fio's
  stop, never reports again, and only SIGKILL ends it — so the receiver must never close first;
- the size of a pass is far beyond what a run moves: a time-based job reaching it would close and reopen
  its connection, which the other side takes as the end of the transfer;
- transfer sizes come from the spec (``bs``, or ``bssplit`` on the sending side); delay, burst, reply and
  alignment have no meaning on a socket and are not sent.

fio counts a transfer that arrived in pieces (a short ``recv``) only by its last piece, so the receiver's
bytes may be a few percent below the sender's (its ``short_ios``); the sender's are exact.

The address the sender connects to is the listening manager's own address as this machine reaches it —
never an address read from an imported file. Ports are the target's fixed one, else the step's base port (fresh
per step, ``AUTO_PORTS``) + the pair's position.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.engine.common.ssh_address import parse_ssh
from app.engine.jobs.specmap import largest_remainder
from app.model.plan import LOCAL, AccessSpec, Plan, Worker
from app.model.units import fio_size

if TYPE_CHECKING:
    from app.engine.jobs.sequence import ActiveWorker

LOOPBACK = "127.0.0.1"
BASE_PORT = 18900
# automatic ports: below the ephemeral ranges (Linux 32768-60999, Windows 49152-65535). The listener binds all
# addresses, so any socket on its port — a connection's local port, a fio --server on one address — makes its
# bind fail ("io engine net init failed")
AUTO_PORTS = range(20000, 32000, 100)
SENDER_START_DELAY_S = 2
RECEIVER_MARGIN_S = 3  # + the start delay: how much longer the receiver may run than its sender
RECEIVER_TAIL_S = SENDER_START_DELAY_S + RECEIVER_MARGIN_S
NET_PASS_SIZE = 1 << 50  # bytes per pass: never reached, so a connection is never reopened mid-step


@dataclass(frozen=True)
class NetPair:
    """One server worker's network target in a step."""

    port: int
    server: int  # manager index
    worker: int  # worker index on the server manager
    target: int  # target index on that worker
    client: int  # partner manager index
    spec: AccessSpec
    server_receives: bool

    @property
    def receiver(self) -> int:
        """The manager that receives, and so listens."""
        return self.server if self.server_receives else self.client


def partner_index(plan: Plan, server: int, worker: Worker, target: int) -> int:
    """The manager holding the target's NIC (the server's own when the file names none it has)."""
    return named_partner(plan, server, worker.targets[target].partner_manager)


def named_partner(plan: Plan, server: int, name: str | None) -> int:
    """The index of the manager called ``name``; the server's own when no manager is."""
    return next((i for i, m in enumerate(plan.managers) if m.name == name), server)


def reach_address(host: str) -> str:
    """Where other managers reach a manager of this ``host`` (its listeners are connected to there): the host
    without its port; this machine's loopback for the local manager; an SSH host's own address."""
    if host == LOCAL:
        return LOOPBACK
    if host.startswith("ssh://"):  # the SSH host's own address (fio itself listens on its loopback)
        ssh = parse_ssh(host)
        return ssh.host if ssh is not None else host
    bare = host.rsplit(":", 1)[0] if host.count(":") == 1 or "]" in host else host
    return bare.strip("[]")


def fresh_port_base() -> int:
    """A step's first automatic port: fresh per step, so a listener left over never answers."""
    return random.choice(AUTO_PORTS)


def net_failure_hint(has_network_jobs: bool, said: str) -> str:
    """What to do when fio's net engine could not start a manager's network job (fio's words in ``said``)."""
    if not has_network_jobs or "net init failed" not in said:
        return ""
    return (
        "; a network worker's job could not start: its listener could not bind its port (in use on that "
        "host?) or its sender could not resolve the receiving manager's address — fix another port on the "
        "Network Targets tab, or run again (automatic ports change with every step)"
    )


def server_receives(spec: AccessSpec) -> bool:
    """Whether a network worker running ``spec`` receives (Iometer's reads): 50 % reads or more, over the lines
    weighted by their share."""
    total = sum(ln.of_size for ln in spec.lines) or 1
    return sum(ln.of_size * ln.reads for ln in spec.lines) / total >= 50


def _sizes(spec: AccessSpec) -> list[tuple[str, str]]:
    sizes = sorted({ln.size for ln in spec.lines})
    if len(sizes) == 1:
        return [("bs", fio_size(sizes[0]))]
    share: dict[int, float] = {}
    for ln in spec.lines:
        share[ln.size] = share.get(ln.size, 0) + ln.of_size
    split = ":".join(f"{fio_size(s)}/{pct}" for s, pct in sorted(largest_remainder(share).items()))
    return [("bssplit", split), ("bs_unaligned", "1")]


def pairs(plan: Plan, step_workers: list[ActiveWorker], port_base: int = BASE_PORT) -> list[NetPair]:
    """Every (server worker, network target) active in a step, with its port: the target's fixed one, else
    the step's base port + the pair's position (skipping the fixed ones)."""
    active = []
    for a in step_workers:
        worker = plan.managers[a.manager].workers[a.worker]
        spec = plan.spec(a.spec) if worker.kind == "network_tcp" else None
        if spec is not None:
            active += [(a, worker, spec, t) for t in a.targets]
    fixed = {worker.targets[t].port for _, worker, _, t in active} - {None}
    out: list[NetPair] = []
    auto = port_base
    for a, worker, spec, t in active:
        port = worker.targets[t].port
        if port is None:
            while auto in fixed:
                auto += 1
            port, auto = auto, auto + 1
        out.append(
            NetPair(
                port,
                a.manager,
                a.worker,
                t,
                partner_index(plan, a.manager, worker, t),
                spec,
                server_receives(spec),
            )
        )
    return out


def job_options(
    pair: NetPair, *, server_side: bool, listener_address: str, run_time: int
) -> list[tuple[str, str | None]]:
    """The options of one side's job (None: an option without a value). ``run_time``: the step's, in seconds
    (the receiver's bound adds ``RECEIVER_TAIL_S`` to it)."""
    receives = pair.server_receives if server_side else not pair.server_receives
    opts: list[tuple[str, str | None]] = [
        ("ioengine", "net"),
        ("protocol", "tcp"),
        ("direct", "0"),
        ("time_based", "1"),
    ]
    if receives:
        opts += [("listen", None), ("runtime", str(run_time + RECEIVER_TAIL_S))]
    else:
        opts += [
            ("hostname", listener_address),
            ("startdelay", str(SENDER_START_DELAY_S)),
            ("runtime", str(run_time)),
        ]
    opts += [
        ("port", str(pair.port)),
        ("rw", "read" if receives else "write"),
        ("size", str(NET_PASS_SIZE)),
        ("iodepth", "1"),
    ]
    return opts + _sizes(pair.spec)

"""Iometer's network workers on fio's ``net`` engine (TCP).

An Iometer network worker is a *server* on its manager; each of its network targets is a NIC on a partner
manager, where Iometer creates the matching *client* worker. In fio terms, for every active (server worker,
network target) of a step:

- the server's manager runs a job that listens on a port (``listen``) and the partner's manager runs a job
  that connects to the server's manager (``hostname``), on that port; the client starts two seconds later
  (``startdelay``), so the listener is ready whichever manager fio starts first (should it not be, the
  client fails to connect, and the step fails in fio's words when its deadline passes);
- fio's TCP jobs move data one way per job, so the direction is the spec's majority: % reads of 50 or more
  means the server receives (Iometer's "read") and the client sends, otherwise the reverse;
- transfer sizes come from the spec (``bs``, or ``bssplit`` on the sending side); delay, burst, reply and
  alignment have no meaning on a socket and are not sent.

The address the client connects to is the server manager's own address as this machine reaches it — never
an address read from an imported file. Ports are ``BASE_PORT`` + the pair's position in the step.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.engine.specmap import largest_remainder
from app.model.plan import AccessSpec, Plan, Worker
from app.model.units import fio_size

BASE_PORT = 18900
CLIENT_START_DELAY_S = 2
NET_FILE_SIZE = 1 << 30  # bytes per pass; time-based steps wrap around


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


def partner_index(plan: Plan, server: int, worker: Worker, target: int) -> int:
    """The manager holding the target's NIC (the server's own when the file names none it has)."""
    name = worker.targets[target].partner_manager
    for i, m in enumerate(plan.managers):
        if m.name == name:
            return i
    return server


def _receives(spec: AccessSpec) -> bool:
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


def pairs(plan: Plan, step_workers: list, port_base: int = BASE_PORT) -> list[NetPair]:
    """Every (server worker, network target) active in a step, numbered for their ports."""
    out: list[NetPair] = []
    for a in step_workers:
        worker = plan.managers[a.manager].workers[a.worker]
        if worker.kind != "network_tcp":
            continue
        spec = plan.spec(a.spec)
        if spec is None:
            continue
        for t in a.targets:
            out.append(NetPair(port_base + len(out), a.manager, a.worker, t,
                               partner_index(plan, a.manager, worker, t), spec, _receives(spec)))
    return out


def job_options(pair: NetPair, *, server_side: bool, server_address: str) -> list[tuple[str, str | None]]:
    """The options of one side's job (None: an option without a value)."""
    reads = pair.server_receives if server_side else not pair.server_receives
    opts: list[tuple[str, str | None]] = [("ioengine", "net"), ("protocol", "tcp"), ("direct", "0")]
    if server_side:
        opts.append(("listen", None))
    else:
        opts += [("hostname", server_address), ("startdelay", str(CLIENT_START_DELAY_S))]
    opts += [("port", str(pair.port)), ("rw", "read" if reads else "write"), ("size", str(NET_FILE_SIZE)),
             ("iodepth", "1")]
    return opts + _sizes(pair.spec)

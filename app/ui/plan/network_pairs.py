"""Network workers in words for the plan panels (Qt-free): partner, direction, who listens where."""

from __future__ import annotations

from app.engine.jobs.network_jobs import named_partner, reach_address, server_receives
from app.model.plan import Manager, Plan, Target, Worker


def partner_of(plan: Plan, manager: int, target: Target) -> Manager:
    """The manager holding a network target's NIC (as the engine pairs them)."""
    return plan.managers[named_partner(plan, manager, target.partner_manager)]


def receives(plan: Plan, worker: Worker) -> bool | None:
    """Whether the worker receives (its first assigned spec is mostly reads); None without a spec."""
    for name in worker.specs:
        spec = plan.spec(name)
        if spec is not None:
            return server_receives(spec)
    return None


def listen_address(manager: Manager) -> str:
    """Where the sending side connects when ``manager`` listens, in words for the table."""
    return reach_address(manager.host) if manager.host else f"{manager.name}'s host, once mapped"


def connection(plan: Plan, manager: int, worker: Worker, target: Target) -> str:
    """Who sends, who listens and where: one line per target."""
    own, partner = plan.managers[manager], partner_of(plan, manager, target)
    port = str(target.port) if target.port is not None else "auto"
    way = receives(plan, worker)
    if way is None:
        return f"{own.name} ⇄ {partner.name} (the direction follows the assigned access specification)"
    sender, receiver = (partner, own) if way else (own, partner)
    return f"{sender.name} sends → {receiver.name} listens at {listen_address(receiver)}:{port}"


def topology_label(plan: Plan, manager: int, worker: Worker) -> str:
    """The worker's line in the Topology: its name with its network partners and direction."""
    if worker.kind == "network_vi":
        return f"{worker.name}  [network VI: not run by fio]"
    partners = (
        ", ".join(dict.fromkeys(partner_of(plan, manager, t).name for t in worker.targets)) or "no target"
    )
    arrow = {True: "←", False: "→", None: "⇄"}[receives(plan, worker)]
    return f"{worker.name}  [TCP {arrow} {partners}]"

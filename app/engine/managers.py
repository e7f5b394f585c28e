"""Managers as endpoints: this machine's fio, or a host running `fio --server` (one manager each)."""

from __future__ import annotations

import platform

from app.engine.fio_binary import FioNotFound, find_fio, fio_version
from app.engine.local_fio import LocalFio
from app.engine.runner import ManagerEndpoint
from app.model.plan import LOCAL, Plan


class ManagerError(Exception):
    """A manager cannot be used; str() says which and what to do."""


def parse_manager_args(items: list[str] | None) -> dict[str, str]:
    """``NAME=HOST[:PORT]`` (or ``NAME=local``) pairs from the command line."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, host = item.partition("=")
        if not sep or not name or not host:
            raise ManagerError(f"--manager {item!r}: expected NAME=HOST[:PORT], e.g. --manager 'DB01=10.0.0.5:8765'")
        out[name] = host
    return out


def local_endpoint(name: str, fio_path: str | None = None) -> ManagerEndpoint:
    try:
        path = str(find_fio(fio_path))
    except FioNotFound as e:
        raise ManagerError(str(e)) from e
    return ManagerEndpoint(name, platform.system(), lambda: LocalFio(name, path), LOCAL, fio_version(path))


def remote_endpoint(name: str, host: str) -> ManagerEndpoint:
    raise ManagerError(f"manager {name!r} at {host}: remote managers are not available in this build")


def build_endpoints(plan: Plan, hosts: dict[str, str] | None = None, fio_path: str | None = None,
                    needed: set[str] | None = None) -> dict[str, ManagerEndpoint]:
    """Endpoints for the plan's managers that have a host (the runner refuses steps of the others)."""
    hosts = hosts or {}
    unknown = sorted(set(hosts) - {m.name for m in plan.managers})
    if unknown:
        raise ManagerError(f"--manager names {', '.join(map(repr, unknown))} are not in the plan; its managers are "
                           + ", ".join(repr(m.name) for m in plan.managers))
    out: dict[str, ManagerEndpoint] = {}
    for m in plan.managers:
        if needed is not None and m.name not in needed:
            continue
        host = hosts.get(m.name, m.host)
        if host is None:
            continue
        out[m.name] = local_endpoint(m.name, fio_path) if host == LOCAL else remote_endpoint(m.name, host)
    return out

"""Managers as endpoints: this machine's fio, or a host running `fio --server` (one manager each)."""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import logging
import platform
import socket
import threading
from collections.abc import Callable, Mapping

from app.engine.common.ssh_address import SshAddress, parse_ssh
from app.engine.devices.environment import probe_facts
from app.engine.remote.hold import BOOT
from app.engine.run.endpoint import ManagerEndpoint
from app.engine.transports.fio_binary import SAVED, FioNotFound, find_fio, fio_version
from app.engine.transports.fioproto import DEFAULT_PORT, RemoteFio, probe
from app.engine.transports.fioproto.client import run_delay
from app.engine.transports.local_fio import LocalFio
from app.engine.transports.remote_host import RemoteHost
from app.engine.transports.ssh_manager import SshFioServer
from app.engine.transports.transport import Transport, TransportError
from app.model.plan import LOCAL, Plan

log = logging.getLogger(__name__)


class ManagerError(Exception):
    """A manager cannot be used; str() says which and what to do."""


def local_endpoint(name: str, fio_path: str | None = None) -> ManagerEndpoint:
    """This machine's fio: ``fio_path``, else the custom path saved in the settings, else the search."""
    try:
        path = str(find_fio(fio_path if fio_path else SAVED))
        version = fio_version(path)
    except FioNotFound as e:
        raise ManagerError(str(e)) from e
    return ManagerEndpoint(
        name, platform.system(), lambda: LocalFio(name, path), LOCAL, version, fio_path=path
    )


def split_host(text: str) -> tuple[str, int]:
    """'host', 'host:port', '[::1]:8765' or '::1' -> (host, port); fio's default port is 8765."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.lstrip(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    if not host or (port and not port.isdigit()) or not 0 < int(port or DEFAULT_PORT) < 65536:
        raise ManagerError(f"{text!r} is not HOST[:PORT] (e.g. 10.0.0.5:8765 or [::1]:8765)")
    return host, int(port or DEFAULT_PORT)


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and names resolving only there (an SSH tunnel's local end)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addrs = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addrs) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs)


EXPOSED_WARNING = (
    "fio --server has no authentication and runs whatever job it is sent: reach it through an "
    "SSH tunnel (ssh -L 8765:localhost:8765 HOST) or a firewall that admits only this machine"
)


def ssh_endpoint(name: str, address: SshAddress) -> ManagerEndpoint:
    """Start `fio --server` on the host's loopback over SSH now (stopped when the run ends)."""
    server = SshFioServer(address)
    try:
        info = server.start()
    except TransportError as e:
        raise ManagerError(f"manager {name!r}: {e}") from e
    assert server.local is not None
    h, port = server.local
    os_name = "Windows" if info.os.lower().startswith("win") else info.os
    shown = str(address)  # messages name the host, not the local end of the forward

    def reopen() -> None:
        """A session that died (its host rebooted, the link dropped) is opened again for the next step."""
        try:
            server.reopen()
        except TransportError as e:
            raise TransportError(f"manager {name!r}: {e}") from e

    return ManagerEndpoint(
        name,
        os_name,
        lambda: RemoteFio(h, port, name=name, shown_as=shown),
        shown,
        info.fio_version.removeprefix("fio-"),
        probe_facts(info.hostname, info.os, info.arch, info.cpus),
        protocol=info.protocol,
        close=server.close,
        server=(h, port),
        python_there=lambda: server.python(BOOT),
        prepare=reopen,
        shown_as=shown,
    )


def remote_endpoint(name: str, host: str, timeout: float = 5.0) -> ManagerEndpoint:
    """Probe the server now, so a wrong address fails before anything runs. ``ssh://[user@]host[:port]``
    starts the server over SSH (:mod:`app.engine.transports.ssh_manager`)."""
    try:
        ssh = parse_ssh(host)
    except ValueError as e:
        raise ManagerError(f"manager {name!r}: {e}") from e
    if ssh is not None:
        return ssh_endpoint(name, ssh)
    h, port = split_host(host)
    try:
        info = probe(h, port, timeout=timeout)
    except TransportError as e:
        raise ManagerError(f"manager {name!r}: {e}") from e
    os_name = "Windows" if info.os.lower().startswith("win") else info.os
    return ManagerEndpoint(
        name,
        os_name,
        lambda: RemoteFio(h, port, name=name),
        f"{h}:{port}",
        info.fio_version.removeprefix("fio-"),
        probe_facts(info.hostname, info.os, info.arch, info.cpus),
        protocol=info.protocol,
        server=(h, port),
    )


PROBES_AT_ONCE = 16  # managers probed (or ssh:// sessions started) at the same time at Start
MORE_NAMED = 12  # how many of the other failed managers a refusal names


def build_endpoints(
    plan: Plan,
    hosts: dict[str, str] | None = None,
    fio_path: str | None = None,
    needed: set[str] | None = None,
    timeout: float = 5.0,
) -> dict[str, ManagerEndpoint]:
    """Endpoints for the plan's managers that have a host (the runner refuses steps of the others), in plan
    order. The managers are probed (``ssh://`` ones started) concurrently, ``PROBES_AT_ONCE`` at a time, so
    Start (on the GUI thread) waits about the slowest probe, not their sum (an idle fio server may take ~1 s to
    answer; a far host its round trips; a silent one the whole ``timeout``, which bounds each remote probe).
    If any fails, every endpoint made is closed and the first failing manager in plan order is refused, naming
    the others that failed too."""
    wanted = _wanted(plan, hosts or {}, needed)

    def make(name: str, host: str) -> ManagerEndpoint:
        return local_endpoint(name, fio_path) if host == LOCAL else remote_endpoint(name, host, timeout)

    if len(wanted) < 2:  # nothing to overlap: no thread
        return {name: make(name, host) for name, host in wanted}
    results = _at_once([(name, functools.partial(make, name, host)) for name, host in wanted])
    try:
        for name, host in _shared_forwards(results, wanted):
            try:  # one after another now: each holds its forward's port before the next picks one
                results[name] = make(name, host)
            except Exception as e:
                results[name] = e
    except BaseException:  # interrupted (Ctrl-C)
        _close_all(results)
        raise
    failed = [(name, r) for name, _ in wanted if isinstance(r := results[name], Exception)]
    if failed:
        _close_all(results)  # SSH sessions already started
        raise _refusal(failed)
    return {name: r for name, _ in wanted if isinstance(r := results[name], ManagerEndpoint)}  # plan order


def _wanted(plan: Plan, hosts: dict[str, str], needed: set[str] | None) -> list[tuple[str, str]]:
    """(name, host) of the managers to reach, in plan order; ``hosts`` (--manager) must name plan managers."""
    unknown = sorted(set(hosts) - {m.name for m in plan.managers})
    if unknown:
        raise ManagerError(
            f"--manager names {', '.join(map(repr, unknown))} are not in the plan; its managers are "
            + ", ".join(repr(m.name) for m in plan.managers)
        )
    out = []
    for m in plan.managers:
        host = hosts.get(m.name, m.host)
        if host is not None and (needed is None or m.name in needed):
            out.append((m.name, host))
    return out


def _refusal(failed: list[tuple[str, Exception]]) -> Exception:
    """The first failure in plan order; with more, a ManagerError that names the others too."""
    first = failed[0][1]
    others = [name for name, _ in failed[1:]]
    if not others or not isinstance(first, ManagerError):
        return first  # one failure: the very error a serial probe raised
    named = ", ".join(others[:MORE_NAMED])
    if len(others) > MORE_NAMED:
        rest = len(others) - MORE_NAMED
        named += f" and {rest} other{'s' if rest > 1 else ''}"
    more = f"{len(others)} more manager{'s' if len(others) > 1 else ''} could not be reached"
    refusal = ManagerError(f"{first}; {more}: {named}")
    refusal.__cause__ = first
    return refusal


def _at_once(
    jobs: list[tuple[str, Callable[[], ManagerEndpoint]]],
) -> dict[str, ManagerEndpoint | Exception]:
    """Each job's endpoint or exception, by name, made on up to ``PROBES_AT_ONCE`` threads. Every thread that
    started has ended when this returns; interrupted (Ctrl-C), jobs not yet begun never begin, those running
    end (each within its own timeout), what they made is closed, and the interruption goes on."""
    results: dict[str, ManagerEndpoint | Exception] = {}
    queue = iter(jobs)
    take = threading.Lock()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            with take:
                job = next(queue, None)
            if job is None:
                return
            name, make = job
            try:
                results[name] = make()
            except Exception as e:  # reported by the caller, the first in plan order
                results[name] = e

    threads = [
        threading.Thread(target=work, name=f"fiometer-probe-{i}", daemon=True)
        for i in range(min(PROBES_AT_ONCE, len(jobs)))
    ]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    except BaseException:
        stop.set()
        for t in threads:
            with contextlib.suppress(RuntimeError):  # never started: nothing to wait for
                t.join()
        _close_all(results)
        raise
    return results


def _shared_forwards(
    results: dict[str, ManagerEndpoint | Exception], wanted: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``ssh://`` managers started at once whose forwards ended on the same local port, closed: each picks a
    free port and its ssh binds it later, so two may pick the same one; the ssh that cannot bind it exits,
    but its manager may have reached the other's fio server through it first. (name, host) in plan order."""
    by_forward: dict[tuple[str, int], list[str]] = {}
    ssh = {name for name, host in wanted if _is_ssh(host)}
    for name, result in results.items():
        if name in ssh and isinstance(result, ManagerEndpoint) and result.server is not None:
            by_forward.setdefault(result.server, []).append(name)
    shared = {name for names in by_forward.values() if len(names) > 1 for name in names}
    for name in shared:
        ep = results[name]
        assert isinstance(ep, ManagerEndpoint)
        log.warning("manager %r: its SSH forward shared a local port with another's; starting it again", name)
        _close(ep)
    return [(name, host) for name, host in wanted if name in shared]


def _is_ssh(host: str) -> bool:
    try:
        return parse_ssh(host) is not None
    except ValueError:  # malformed: it failed to start anyway
        return False


def _close_all(results: dict[str, ManagerEndpoint | Exception]) -> None:
    for result in results.values():
        if isinstance(result, ManagerEndpoint):
            _close(result)


def _close(ep: ManagerEndpoint) -> None:
    """End what reaching a manager needed (an SSH session); a failure to close hides no refusal."""
    if ep.close is not None:
        try:
            ep.close()
        except Exception:
            log.warning("manager %r: could not close its session", ep.name, exc_info=True)


class TransportPool:
    """A run's factory of transports, step by step: which carries each manager, and when fio servers loaded
    together are told to go. A step with ``decode_apart`` fio servers or more (0: never) reads and decodes
    them in :class:`RemoteHost` processes, ``hosts_per_process`` servers each, kept for the run."""

    def __init__(self, decode_apart: int = 1, hosts_per_process: int = 16) -> None:
        self.decode_apart = decode_apart
        self.hosts_per_process = max(hosts_per_process, 1)
        self.hosts: list[RemoteHost] = []  # the processes reading and decoding fio servers

    def make(self, endpoints: Mapping[str, ManagerEndpoint]) -> dict[str, Transport]:
        """A fresh transport per manager of a step."""
        servers = {name: ep.server for name, ep in endpoints.items() if ep.server is not None}
        if not (0 < self.decode_apart <= len(servers)):
            return {name: ep.make_transport() for name, ep in endpoints.items()}
        k = -(-len(servers) // self.hosts_per_process)  # ceil: as many processes as the fan-out needs
        while len(self.hosts) < k:
            self.hosts.append(RemoteHost())
        spread = {name: self.hosts[i % k] for i, name in enumerate(servers)}  # round robin: even loads
        return {
            name: spread[name].transport(servers[name], name, ep.shown_as)
            if name in servers
            else ep.make_transport()
            for name, ep in endpoints.items()
        }

    @staticmethod
    def go_delay(loaded_at: list[float], now: float) -> float:
        """Seconds to wait before telling fio servers that accepted their jobs at ``loaded_at`` (monotonic)
        to go, so that none is about to look at its socket (``fioproto.client.run_delay``); 0 for one."""
        return run_delay(loaded_at, now) if len(loaded_at) > 1 else 0.0

    def close(self) -> None:
        for host in self.hosts:
            host.close()

"""The managers of a run are probed at Start all at once (app.engine.run.managers.build_endpoints), against
real `fio --server` processes and real sockets on 127.0.0.x: the same endpoints as one probe after another,
in plan order; far managers cost about one round trip together and unreachable ones one timeout, not one
each; the first failing manager in plan order is the one refused, the others counted; at most
PROBES_AT_ONCE probes at a time; no probe thread is left behind."""

from __future__ import annotations

import shutil
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from app.engine.run.managers import (
    MORE_NAMED,
    PROBES_AT_ONCE,
    ManagerError,
    build_endpoints,
    local_endpoint,
    remote_endpoint,
)
from app.model.plan import LOCAL
from tests.fio_servers import free_port
from tests.helpers import grid
from tests.platform_marks import posix_only
from tests.probe_peers import SilentListener, SlowLink

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


def probe_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("fiometer-probe")]


def refused(host: str) -> str:
    """An address on ``host`` where nothing listens: connecting is refused at once."""
    return f"{host}:{free_port(host)}"


@pytest.fixture
def silent() -> Iterator[list[SilentListener]]:
    made: list[SilentListener] = []
    yield made
    for listener in made:
        listener.close()


def test_servers_probed_at_once_give_the_serial_endpoints_in_plan_order(fio_server):
    """Five real servers, a local manager, a manager not needed and one without a host: the same endpoints
    as probing one after another, in plan order (not in the order the probes end)."""
    servers = [fio_server(f"127.0.0.{n}") for n in range(2, 7)]
    plan = grid(8, 1, 1)
    plan.managers[0].host = LOCAL
    for m, (host, port, _) in zip(plan.managers[1:6], reversed(servers), strict=True):
        m.host = f"{host}:{port}"
    plan.managers[6].host = None  # not mapped: skipped
    plan.managers[7].host = refused("127.0.0.7")  # not needed: never probed
    needed = {m.name for m in plan.managers[:7]}

    endpoints = build_endpoints(plan, needed=needed)

    assert list(endpoints) == ["M1", "M2", "M3", "M4", "M5", "M6"]
    serial = {"M1": local_endpoint("M1")} | {
        m.name: remote_endpoint(m.name, m.host) for m in plan.managers[1:6] if m.host
    }

    def seen(ep):
        return (ep.name, ep.os_name, ep.host, ep.fio_version, ep.environment, ep.protocol, ep.server)

    assert [seen(ep) for ep in endpoints.values()] == [seen(ep) for ep in serial.values()]
    assert endpoints["M2"].server == servers[-1][:2] and endpoints["M6"].server == servers[0][:2]
    assert not probe_threads()


def test_far_managers_are_probed_together_not_one_after_another(fio_server):
    """Eight managers whose answers take 1 s to come back (relays to three real servers): one after another
    the probes take at least 8 s; together about one delay plus a fio server's own reaction (up to ~1 s: an
    idle server's handler looks at its socket once a second)."""
    delay, n = 1.0, 8
    servers = [fio_server(f"127.0.0.{2 + i}")[:2] for i in range(3)]
    links = [SlowLink(f"127.0.0.{10 + i}", servers[i % 3], delay) for i in range(n)]
    try:
        plan = grid(n, 1, 1)
        for m, link in zip(plan.managers, links, strict=True):
            m.host = link.address
        t0 = time.monotonic()
        endpoints = build_endpoints(plan)
        took = time.monotonic() - t0
    finally:
        for link in links:
            link.close()
    print(f"\n{n} managers {delay:g} s away: probed in {took:.2f} s")
    assert list(endpoints) == [m.name for m in plan.managers]
    assert [ep.host for ep in endpoints.values()] == [link.address for link in links]
    assert [ep.server for ep in endpoints.values()] == [
        (h, int(p)) for h, p in (link.address.split(":") for link in links)
    ]
    assert took >= delay * 0.9
    assert took < n * delay * 0.75, (  # one after another: >= 8 s; together ~1-2 s, 4 s seen under load
        f"{took:.1f} s: the probes did not overlap (one after another: >= {n * delay:g} s)"
    )
    assert not probe_threads()


def test_unreachable_managers_cost_one_timeout_together_and_the_first_in_plan_order_is_refused(
    fio_server, silent
):
    """M1 answers, M2 accepts and never answers, M3 refuses at once (it fails first), M4-M8 never answer.
    All are waited for together: about one timeout, not six; M2 is named, the other six counted."""
    timeout = 1.5
    host, port, _ = fio_server("127.0.0.2")
    silent.extend(SilentListener(f"127.0.0.{n}") for n in (3, 5, 6, 7, 8, 9))
    plan = grid(8, 1, 1)
    plan.managers[0].host = f"{host}:{port}"
    plan.managers[1].host = silent[0].address
    plan.managers[2].host = refused("127.0.0.4")
    for m, listener in zip(plan.managers[3:], silent[1:], strict=True):
        m.host = listener.address

    t0 = time.monotonic()
    with pytest.raises(ManagerError) as refusal:
        build_endpoints(plan, timeout=timeout)
    took = time.monotonic() - t0

    print(f"\n6 silent managers + 1 refused, timeout {timeout} s: refused after {took:.2f} s")
    serial = 6 * timeout
    assert took < serial / 2, f"{took:.1f} s: the probes did not overlap (one after another: {serial:.0f} s)"
    assert took >= timeout * 0.9  # the silent ones were really waited for
    text = str(refusal.value)
    assert text.startswith(
        f"manager 'M2': {silent[0].address} accepted the connection but did not answer like a fio server "
        f"within {timeout:g} s"
    ), text
    assert text.endswith("; 6 more managers could not be reached: M3, M4, M5, M6, M7, M8"), text
    assert all(listener.accepted == 1 for listener in silent)
    assert not probe_threads()


def test_one_failure_is_refused_with_the_text_of_a_serial_probe(fio_server):
    host, port, _ = fio_server("127.0.0.2")
    plan = grid(3, 1, 1)
    plan.managers[0].host = f"{host}:{port}"
    plan.managers[1].host = refused("127.0.0.3")
    plan.managers[2].host = LOCAL
    with pytest.raises(ManagerError) as serial:
        remote_endpoint("M2", plan.managers[1].host)
    with pytest.raises(ManagerError) as refusal:
        build_endpoints(plan)
    assert str(refusal.value) == str(serial.value)
    assert str(refusal.value).startswith("manager 'M2': nothing is listening on 127.0.0.3:")
    assert not probe_threads()


def test_many_failures_name_the_first_few_and_count_the_rest():
    n = MORE_NAMED + 3
    plan = grid(n, 1, 1)
    for m in plan.managers:
        m.host = refused("127.0.0.2")
    with pytest.raises(ManagerError) as refusal:
        build_endpoints(plan)
    named = ", ".join(f"M{i}" for i in range(2, MORE_NAMED + 2))
    assert str(refusal.value).startswith("manager 'M1': nothing is listening on 127.0.0.2:")
    assert str(refusal.value).endswith(
        f"; {n - 1} more managers could not be reached: {named} and 2 others"
    ), refusal.value
    assert not probe_threads()


def test_at_most_probes_at_once_are_open_together(silent):
    """Twenty managers on one listener that never answers: PROBES_AT_ONCE connections at a time, then the
    rest (two timeouts in all, not twenty)."""
    timeout = 1.0
    n = PROBES_AT_ONCE + 4
    silent.append(SilentListener("127.0.0.2"))
    plan = grid(n, 1, 1)
    for m in plan.managers:
        m.host = silent[0].address
    t0 = time.monotonic()
    with pytest.raises(ManagerError, match=rf"^manager 'M1': .*; {n - 1} more managers could not be reached"):
        build_endpoints(plan, timeout=timeout)
    took = time.monotonic() - t0
    deadline = time.monotonic() + 5
    while silent[0].open and time.monotonic() < deadline:  # the listener sees the last ones close
        time.sleep(0.02)
    assert silent[0].accepted == n and silent[0].open == 0
    assert silent[0].most_open == PROBES_AT_ONCE
    assert took < n * timeout / 3, f"{took:.1f} s for {n} silent managers at {timeout} s each"
    assert not probe_threads()


PROBE_TIMEOUT = 4.0


@posix_only("delivers SIGINT to the main thread (signal.pthread_kill)")
def test_probe_threads_are_gone_when_the_caller_is_interrupted(silent, monkeypatch):
    """Ctrl-C while waiting for the probes: the probes already running end (each within its timeout), the
    others never start, and no probe thread remains."""
    import app.engine.run.managers as managers

    silent.extend(SilentListener(f"127.0.0.{n}") for n in (2, 3))
    plan = grid(PROBES_AT_ONCE + 2, 1, 1)
    for i, m in enumerate(plan.managers):
        m.host = silent[i % 2].address
    started = threading.Semaphore(0)
    real = managers.remote_endpoint

    def remote(name, host, timeout=5.0):
        started.release()
        return real(name, host, timeout)

    monkeypatch.setattr(managers, "remote_endpoint", remote)

    main = threading.main_thread().ident
    assert main is not None
    # Ctrl-C as Python sees it in a terminal: a process started in the background by a shell without job
    # control inherits SIGINT ignored, and Python then installs no handler (seen: `bash -c "pytest … & wait"`)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupt():  # Ctrl-C once every probe the pool admits has started
        for _ in range(PROBES_AT_ONCE):
            started.acquire(timeout=10)
        signal.pthread_kill(main, signal.SIGINT)

    interrupter = threading.Thread(target=interrupt, name="interrupter")
    interrupter.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            # long enough that the interrupter runs before the first probes time out, on a loaded machine too
            build_endpoints(plan, timeout=PROBE_TIMEOUT)
        interrupter.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    # the running probes' timeout, not the queued ones' after it too
    assert time.monotonic() - t0 < PROBE_TIMEOUT * 1.5
    assert not probe_threads()
    assert sum(listener.accepted for listener in silent) == PROBES_AT_ONCE  # the last two never started

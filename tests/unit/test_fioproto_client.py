"""RemoteFio and probe() against scripted fake fio servers on 127.0.0.1 (replaying real recordings)."""

from __future__ import annotations

import threading
import time

import pytest

from app.engine.transports.fioproto.client import RemoteFio, forget_protocol, probe, status_interval_arg
from app.engine.transports.fioproto.commands import Op
from app.engine.transports.transport import (
    ANSWERING_AGAIN,
    SENT_NOTHING,
    UNREACHABLE,
    Finished,
    Message,
    Snapshot,
    TransportError,
)
from tests.fioproto_support import (
    FakeConn,
    FakeServer,
    accept_job,
    as_printed,
    as_reported_live,
    compare,
    find_captures,
    load_fio_json,
    probe_reply_payload,
    server_packets,
    version_gate,
)

JOB = "[global]\nioengine=null\n[x]\nsize=1m\n"


@pytest.fixture
def servers():
    made: list[FakeServer] = []

    def make(handler) -> FakeServer:
        srv = FakeServer(handler)
        made.append(srv)
        forget_protocol("127.0.0.1", srv.port)
        return srv

    yield make
    for srv in made:
        srv.close()


def replay(
    name: str,
    *,
    speed: float = 0.05,
    stop_after_reports: int | None = None,
    then: str = "end",
    pause: float = 0.0,
):
    """A fake server speaking the recording's protocol that replays its server->client traffic; after
    ``stop_after_reports`` reports it hangs ("hang"), hangs up ("drop") or says nothing for ``pause``
    seconds, ETA polls unanswered, and goes on ("pause": a server whose host is short of CPU)."""
    packets = [p for p in server_packets(name) if p.packet.opcode not in (Op.ETA, Op.PROBE)]
    probe_pkt = next(p.packet for p in server_packets(name) if p.packet.opcode == Op.PROBE)
    version = probe_pkt.version
    starts = [p.packet.payload for p in packets if p.packet.opcode == Op.START]
    packets = [p for p in packets if p.packet.opcode != Op.START]

    def handler(conn: FakeConn) -> None:
        probe = version_gate(conn, version)
        if probe is None:
            return
        conn.send(version, Op.PROBE, probe_pkt.payload, tag=probe.tag)
        if not accept_job(conn, version, starts):
            return
        reports = 0
        prev = packets[0].time
        for tp in packets:
            time.sleep(max(0.0, tp.time - prev) * speed)
            prev = tp.time
            conn.send(version, tp.packet.opcode, tp.packet.payload)
            if tp.packet.opcode == Op.DU:
                reports += 1
                if stop_after_reports is not None and reports == stop_after_reports:
                    if then == "pause":
                        time.sleep(pause)
                        continue
                    if then == "hang":
                        conn.read_until(Op.EXIT, timeout=10)  # stay connected, say nothing
                    return  # "drop": hang up mid-run

    return handler


def run(fio: RemoteFio) -> list:
    return list(fio.events())


def test_version_discovery_and_a_full_recorded_run(servers):
    srv = servers(replay("fio-3.42-job3"))
    fio = RemoteFio("127.0.0.1", srv.port, name="M1")
    t = time.monotonic()
    fio.start(JOB, status_interval=1)
    assert fio.info is not None and fio.info.protocol == 120 and fio.info.fio_version == "fio-3.42"
    events = run(fio)
    assert time.monotonic() - t < 10
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert events[-1] == Finished("M1", True, "", 0, False)
    assert [s.final for s in snaps] == [False] * 4 + [True]
    stock = load_fio_json((find_captures() / "fio-3.42-job3.json").read_text())
    jobs = [j for s in snaps for j in s.jobs]
    for j in jobs:  # the fake server's address instead of the recorded one
        j["hostname"], j["port"] = "127.0.0.1", stock["client_stats"][0]["port"]
    expected = as_reported_live(stock["client_stats"], len(snaps[-1].jobs))
    assert compare(as_printed(jobs), expected)[0] == []
    # first contact: a rejected v97 PROBE, then a v120 connection
    assert [c.received[0].version for c in srv.connections] == [97, 120]
    jobline = next(p for p in srv.connections[1].received if p.opcode == Op.JOBLINE)
    assert b"--status-interval=1\0" in jobline.payload and b"--output-format=json+\0" in jobline.payload
    job = next(p for p in srv.connections[1].received if p.opcode == Op.JOB)
    assert job.payload.endswith(JOB.encode())


def test_known_version_is_remembered_and_the_job_is_pipelined(servers):
    srv = servers(replay("fio-3.41-job3", speed=0.01))
    for _ in range(2):
        fio = RemoteFio("127.0.0.1", srv.port)
        fio.start(JOB)
        assert run(fio)[-1].ok
    # second run: one connection, no rejected attempt
    assert [c.received[0].version for c in srv.connections] == [97, 113, 113]
    # JOBLINE and JOB travel with the PROBE; RUN waits for the job's START
    ops = [p.opcode for p in srv.connections[-1].received]
    assert ops[:4] == [Op.PROBE, Op.JOBLINE, Op.JOB, Op.RUN]


def test_probe_reports_the_server(servers):
    def handler(conn: FakeConn) -> None:
        pkt = version_gate(conn, 97)
        if pkt is not None:
            conn.send(97, Op.PROBE, probe_reply_payload("fio-3.33", "box7"), tag=pkt.tag)
            conn.read()

    srv = servers(handler)
    info = probe("127.0.0.1", srv.port, timeout=3)
    assert (info.hostname, info.fio_version, info.protocol, info.os, info.arch, info.cpus) == (
        "box7",
        "fio-3.33",
        97,
        "Linux",
        "x86-64",
        4,
    )


def test_idle_server_answering_after_a_second_is_fine(servers):
    def handler(conn: FakeConn) -> None:
        pkt = version_gate(conn, 97)
        if pkt is not None:
            time.sleep(1.2)  # fio's idle connection handler polls its socket about once a second
            conn.send(97, Op.PROBE, probe_reply_payload(), tag=pkt.tag)
            conn.read()

    srv = servers(handler)
    assert probe("127.0.0.1", srv.port, timeout=3).fio_version == "fio-3.33"


def test_unsupported_version_is_named_with_the_supported_ones(servers):
    srv = servers(lambda conn: version_gate(conn, 95))
    with pytest.raises(TransportError) as exc:
        probe("127.0.0.1", srv.port, timeout=3)
    msg = str(exc.value)
    assert f"127.0.0.1:{srv.port}" in msg and "protocol version 95" in msg
    assert "fio 3.31-3.33 (protocol 97)" in msg and "fio 3.42 (protocol 120)" in msg


def test_closed_port_gives_the_plain_message(servers):
    srv = servers(None)
    port = srv.port
    srv.close()
    with pytest.raises(TransportError) as exc:
        RemoteFio("127.0.0.1", port).start(JOB)
    assert str(exc.value) == f"nothing is listening on 127.0.0.1:{port} — start `fio --server` there"


def test_silent_listener_times_out_on_probe(servers):
    srv = servers(None)  # accepts, never answers
    fio = RemoteFio("127.0.0.1", srv.port, answer_timeout=1.5)
    t = time.monotonic()
    with pytest.raises(TransportError, match="did not answer like a fio server within 1.5 s"):
        fio.start(JOB)
    assert 1.4 < time.monotonic() - t < 20  # the timeout, not a hang


def test_server_going_silent_mid_run_ends_the_run(servers):
    srv = servers(replay("fio-3.33-randread-psync", stop_after_reports=2, then="hang"))
    fio = RemoteFio("127.0.0.1", srv.port, name="Quiet", silence_timeout=1.5, eta_poll=0.3)
    fio.start(JOB)
    t = time.monotonic()
    events = run(fio)
    assert time.monotonic() - t < 6
    assert sum(isinstance(e, Snapshot) for e in events) == 2
    fin = events[-1]
    assert isinstance(fin, Finished) and not fin.ok
    assert fin.reason.startswith(f"manager Quiet (127.0.0.1:{srv.port}) stopped answering for ")
    assert any(p.opcode == Op.SEND_ETA for p in srv.connections[-1].received)  # we kept asking


def test_server_silent_for_a_while_is_late_not_dead(servers):
    srv = servers(replay("fio-3.33-randread-psync", stop_after_reports=2, then="pause", pause=2.5))
    fio = RemoteFio("127.0.0.1", srv.port, name="Busy", silence_note=1.0, silence_timeout=6.0, eta_poll=0.3)
    fio.start(JOB)
    events = run(fio)
    fin = events[-1]
    assert isinstance(fin, Finished) and fin.ok, fin.reason
    notes = [(e.level, e.text, e.kind) for e in events if isinstance(e, Message)]
    where = f"manager Busy (127.0.0.1:{srv.port})"
    assert (
        "warning",
        f"{where} has sent nothing for 1 s (its host busy, or frozen?); waiting up to 6 s before "
        "giving up on it",
        SENT_NOTHING,
    ) in notes
    back = [t for lv, t, k in notes if (lv, k) == ("info", ANSWERING_AGAIN)]
    assert back and back[0].startswith(f"{where} is answering again after "), notes
    assert 2 <= int(back[0].split("after ")[1].split(" s")[0]) <= 4, notes
    assert sum(isinstance(e, Snapshot) for e in events) >= 4  # the reports after the pause were all kept


def test_silent_server_whose_port_refuses_connections_fails_at_the_warning(servers):
    srv = servers(replay("fio-3.33-randread-psync", stop_after_reports=2, then="hang"))
    fio = RemoteFio("127.0.0.1", srv.port, name="Gone", silence_note=1.0, silence_timeout=20.0, eta_poll=0.3)
    fio.start(JOB)
    events, t0 = [], time.monotonic()
    for ev in fio.events():
        events.append(ev)
        if sum(isinstance(e, Snapshot) for e in events) == 2 and srv.listener.fileno() != -1:
            srv.listener.close()  # the host is down: nothing accepts connections there any more
    fin = events[-1]
    assert isinstance(fin, Finished) and not fin.ok
    assert fin.reason.startswith(f"manager Gone (127.0.0.1:{srv.port}) sent nothing for ")
    assert fin.reason.endswith(
        "its port no longer accepts connections: its fio server is gone; samples so far kept"
    )
    assert time.monotonic() - t0 < 10  # at the 1 s warning, not at the 20 s limit


def test_server_answering_only_eta_is_not_silent(servers):
    def handler(conn: FakeConn) -> None:
        pkt = version_gate(conn, 97)
        if pkt is None:
            return
        conn.send(97, Op.PROBE, probe_reply_payload(), tag=pkt.tag)
        if not accept_job(conn, 97):
            return
        deadline = time.monotonic() + 3.0  # longer than the silence timeout
        while time.monotonic() < deadline:
            p = conn.read(timeout=0.2)
            if p is not None and p.opcode == Op.SEND_ETA:
                conn.send(97, Op.ETA, bytes(168), tag=p.tag)
        conn.send(97, Op.STOP, bytes(8))
        conn.send(97, Op.QUIT)

    srv = servers(handler)
    fio = RemoteFio("127.0.0.1", srv.port, silence_timeout=1.5, eta_poll=0.3)
    fio.start(JOB)
    fin = run(fio)[-1]
    assert fin.ok, fin.reason


def test_dropped_connection_keeps_samples(servers):
    srv = servers(replay("fio-3.33-randread-psync", stop_after_reports=2, then="drop"))
    fio = RemoteFio("127.0.0.1", srv.port, name="HostA")
    fio.start(JOB)
    events = run(fio)
    assert sum(isinstance(e, Snapshot) for e in events) == 2
    assert events[-1] == Finished(
        "HostA",
        False,
        f"lost connection to manager HostA (127.0.0.1:{srv.port}) mid-step; samples so far kept",
        None,
        False,
    )


def graceful_server(conn: FakeConn) -> None:
    """Sends one report, then on QUIT the final one, STOP and QUIT (like fio after a stop)."""
    skip = (Op.ETA, Op.PROBE, Op.START)
    pkts = [p.packet for p in server_packets("fio-3.33-randread-psync") if p.packet.opcode not in skip]
    first_du = next(i for i, p in enumerate(pkts) if p.opcode == Op.DU)
    final_start = max(i for i, p in enumerate(pkts) if p.opcode == Op.DU and i < len(pkts) - 3) + 1
    pkt = version_gate(conn, 97)
    if pkt is None:
        return
    conn.send(97, Op.PROBE, probe_reply_payload(), tag=pkt.tag)
    if not accept_job(conn, 97):
        return
    for p in pkts[: first_du + 1]:
        conn.send(97, p.opcode, p.payload)
    if conn.read_until(Op.QUIT, timeout=10) is None:
        return
    for p in pkts[final_start:]:
        conn.send(97, p.opcode, p.payload)


def test_stop_collects_the_final_numbers(servers):
    srv = servers(graceful_server)
    fio = RemoteFio("127.0.0.1", srv.port)
    fio.start(JOB)
    events = []
    for ev in fio.events():
        events.append(ev)
        if isinstance(ev, Snapshot) and not ev.final:
            fio.stop()
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert [s.final for s in snaps] == [False, True]
    assert snaps[1].jobs[0]["read"]["total_ios"] > snaps[0].jobs[0]["read"]["total_ios"]
    assert events[-1] == Finished(fio.name, True, "", 0, True)


def test_abort_from_another_thread_ends_at_once_and_asks_the_server_to_quit(servers):
    srv = servers(graceful_server)
    fio = RemoteFio("127.0.0.1", srv.port)
    fio.start(JOB)
    events = []
    t = None
    for ev in fio.events():
        events.append(ev)
        if isinstance(ev, Snapshot) and t is None:
            t = time.monotonic()
            threading.Thread(target=fio.abort).start()
    assert time.monotonic() - t < 8  # at once: the server would wait 10 s for a QUIT
    fin = events[-1]
    assert isinstance(fin, Finished) and not fin.ok and fin.stopped
    assert sum(isinstance(e, Finished) for e in events) == 1
    time.sleep(0.2)
    assert any(p.opcode == Op.QUIT for p in srv.connections[-1].received)


def test_status_interval_argument():
    assert status_interval_arg(1) == "--status-interval=1"
    assert status_interval_arg(2.0) == "--status-interval=2"
    assert status_interval_arg(0.25) == "--status-interval=250ms"
    with pytest.raises(ValueError):
        status_interval_arg(0)


def test_run_is_not_sent_before_the_job_is_accepted(servers):
    """A rejected job must not leave RUN unread on fio's side: fio's hang-up would become a TCP
    reset that can swallow the error text (seen with real fio 3.33)."""
    import struct

    from app.engine.transports.fioproto.commands import LOG_ERR, text_pdu

    seen: list[int] = []

    def handler(conn: FakeConn) -> None:
        pkt = version_gate(conn, 97)
        if pkt is None:
            return
        conn.send(97, Op.PROBE, probe_reply_payload(), tag=pkt.tag)
        conn.read_until(Op.JOBLINE)
        conn.send(97, Op.START, struct.pack("<II", 0, 0))
        conn.read_until(Op.JOB)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            p = conn.read(timeout=0.1)
            if p is not None:
                seen.append(p.opcode)
        conn.send(97, Op.TEXT, text_pdu("Bad option <nope=1>\n", LOG_ERR))
        conn.send(97, Op.QUIT)

    srv = servers(handler)
    fio = RemoteFio("127.0.0.1", srv.port)
    fio.start(JOB)
    events = run(fio)
    assert Op.RUN not in seen
    assert not events[-1].ok and "Bad option <nope=1>" in events[-1].reason


def test_stop_before_the_job_started_never_sends_run(servers):
    import struct

    seen: list[int] = []

    def handler(conn: FakeConn) -> None:
        pkt = version_gate(conn, 97)
        if pkt is None:
            return
        conn.send(97, Op.PROBE, probe_reply_payload(), tag=pkt.tag)
        conn.read_until(Op.JOBLINE)
        conn.send(97, Op.START, struct.pack("<II", 0, 0))
        conn.read_until(Op.JOB)
        time.sleep(0.3)  # the user presses Stop while fio is still setting up
        conn.send(97, Op.START, struct.pack("<II", 1, 1))
        while (p := conn.read(timeout=1.0)) is not None:
            seen.append(p.opcode)

    srv = servers(handler)
    fio = RemoteFio("127.0.0.1", srv.port)
    fio.start(JOB)
    fio.stop()
    events = run(fio)
    assert events == [Finished(fio.name, True, "stopped before the job started", None, True)]
    time.sleep(1.2)
    assert Op.RUN not in seen and Op.QUIT in seen


def test_a_learnt_version_newer_than_the_first_guess_is_kept_for_the_next_process(servers):
    """A 3.41 server rejects the first guess (v97); the version it speaks is saved in the settings, so a new
    process (no memory of it) connects once, with v113."""
    from app import user_settings
    from app.engine.transports.fioproto import client

    srv = servers(replay("fio-3.41-job3", speed=0.01))
    fio = RemoteFio("127.0.0.1", srv.port)
    fio.start(JOB)
    assert run(fio)[-1].ok
    assert user_settings.saved_protocol(f"127.0.0.1:{srv.port}") == 113
    with client._known_lock:
        client._known_protocol.pop(("127.0.0.1", srv.port))  # as a new process
    fio = RemoteFio("127.0.0.1", srv.port)
    fio.start(JOB)
    assert run(fio)[-1].ok
    assert [c.received[0].version for c in srv.connections] == [97, 113, 113]


def test_a_host_that_does_not_answer_is_unreachable_not_gone():
    """Refused (the host answers, nothing listens) and unreachable (no answer at all) are told apart. A
    listener whose accept queue is full drops new connection attempts, as a host that is down does."""
    import socket

    from app.engine.transports.fioproto.client import listener_state

    with socket.create_server(("127.0.0.1", 0), backlog=0) as full:
        port = full.getsockname()[1]
        assert listener_state("127.0.0.1", port, 0.5) == "listening"
        held = []
        try:
            for _ in range(8):  # fill the accept queue (nothing accepts)
                c = socket.socket()
                c.setblocking(False)
                c.connect_ex(("127.0.0.1", port))
                held.append(c)
            time.sleep(0.2)
            assert listener_state("127.0.0.1", port, 0.5) == "unreachable"
        finally:
            for c in held:
                c.close()
    assert listener_state("127.0.0.1", port, 0.5) == "refused"


def test_a_silent_server_whose_host_is_unreachable_is_waited_for_and_said_so(servers, monkeypatch):
    from app.engine.transports.fioproto import client

    srv = servers(replay("fio-3.33-randread-psync", stop_after_reports=2, then="hang"))
    monkeypatch.setattr(client, "listener_state", lambda *a: "unreachable")  # (told apart above, for real)
    fio = RemoteFio("127.0.0.1", srv.port, name="Far", silence_note=1.0, silence_timeout=4.0, eta_poll=0.3)
    fio.start(JOB)
    events = list(fio.events())
    notes = [e.text for e in events if isinstance(e, Message) and "unreachable" in e.text]
    assert len(notes) == 1 and "is unreachable (its host does not answer" in notes[0]
    assert [e.kind for e in events if isinstance(e, Message) and e.kind] == [SENT_NOTHING, UNREACHABLE]
    fin = events[-1]
    assert not fin.ok and "gone" not in fin.reason and "stopped answering for 4 s" in fin.reason


def test_a_reader_held_up_itself_is_not_told_the_server_is_silent(servers):
    """Our own process not scheduled (here: the consumer of events() away for longer than the silence
    limit, in the middle of a batch) while the server goes on sending: the bytes waiting on the socket
    show the server is alive. No silence warning, no failure; meanwhile another thread (the status
    report) sees the server heard now and the waiting bytes counted, where the OS says how many."""
    from app.engine.transports.fioproto.client import _FIONREAD

    srv = servers(replay("fio-3.33-randread-psync", speed=0.5))
    fio = RemoteFio("127.0.0.1", srv.port, name="Held", silence_note=1.0, silence_timeout=1.5, eta_poll=0.3)
    fio.start(JOB)
    events, seen = [], None
    for ev in fio.events():
        events.append(ev)
        if isinstance(ev, Snapshot) and seen is None:
            before = fio.bytes_received
            time.sleep(2.5)  # this reader held up; the server sends on meanwhile
            seen = (time.monotonic() - fio.last_heard, fio.bytes_received - before)
    fin = events[-1]
    assert isinstance(fin, Finished) and fin.ok, fin.reason
    assert not [e.text for e in events if isinstance(e, Message) and "sent nothing" in e.text]
    assert sum(isinstance(e, Snapshot) for e in events) >= 3
    if _FIONREAD is not None:  # heard now, and the bytes waiting unread count as received
        assert seen[0] < 0.5 and seen[1] > 0, seen

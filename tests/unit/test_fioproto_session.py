"""RunDecoder: server messages -> Snapshot / Message / Finished, without sockets."""

from __future__ import annotations

import json

import pytest

from app.engine.transports.fioproto.commands import LOG_ERR, LOG_INFO, Op, stop_pdu, text_pdu
from app.engine.transports.fioproto.decoder import RunDecoder
from app.engine.transports.fioproto.frames import Packet
from app.engine.transports.fioproto.layouts import layout_for
from app.engine.transports.transport import Finished, Message, Snapshot
from tests.fioproto_support import (
    CAPTURES,
    as_printed,
    as_reported_live,
    compare,
    find_captures,
    load_fio_json,
    server_packets,
    without_percentile_lists,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def session_for(name: str, clock: Clock, manager: str = "m1") -> RunDecoder:
    stock = load_fio_json((find_captures() / f"{name}.json").read_text())
    host, port = stock["client_stats"][0]["hostname"], stock["client_stats"][0]["port"]
    version = server_packets(name)[0].packet.version
    return RunDecoder(manager, layout_for(version), host, port, clock=clock, fio_version="fio-x")


def replay(name: str, session: RunDecoder, clock: Clock, *, upto: int | None = None):
    events = []
    packets = server_packets(name)[:upto]
    for tp in packets:
        clock.now = 100.0 + tp.time
        events += session.on_tick()
        events += session.on_packet(tp.packet)
    return events


@pytest.mark.parametrize("name", CAPTURES)
def test_recorded_run_gives_one_snapshot_per_report_and_a_clean_finish(name):
    clock = Clock()
    s = session_for(name, clock)
    events = replay(name, s, clock)
    stock = load_fio_json((find_captures() / f"{name}.json").read_text())
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert [type(e) for e in events] == [Snapshot] * len(snaps) + [Finished]
    assert events[-1] == Finished("m1", True, "", 0, False)
    assert len(snaps) == len(stock["client_stats"])  # one job: one TS per report
    assert [s.final for s in snaps] == [False] * (len(snaps) - 1) + [True]
    expected = as_reported_live(stock["client_stats"], len(snaps[-1].jobs))
    problems, _ = compare(as_printed([j for sn in snaps for j in sn.jobs]), expected)
    assert problems == []
    assert all(len(sn.disk_util) == 1 for sn in snaps)
    raw = json.loads(snaps[-1].raw)
    assert raw["client_stats"][0]["read"]["total_ios"] == snaps[-1].jobs[0]["read"]["total_ios"]
    assert raw["global options"]["rw"] in ("randread", "randrw")
    times = [sn.received for sn in snaps]
    assert times == sorted(times)


def test_report_is_emitted_after_the_settle_time_without_waiting_for_the_next():
    clock = Clock()
    s = session_for("fio-3.33-randread-psync", clock)
    packets = server_packets("fio-3.33-randread-psync")
    first_du = next(i for i, p in enumerate(packets) if p.packet.opcode == Op.DU)
    events = replay("fio-3.33-randread-psync", s, clock, upto=first_du + 1)
    assert not any(isinstance(e, Snapshot) for e in events)
    clock.now += 0.1
    assert s.on_tick() == []
    clock.now += 0.2
    (snap,) = s.on_tick()
    assert isinstance(snap, Snapshot) and not snap.final and snap.jobs[0]["read"]["total_ios"] > 0


def test_late_stop_repeats_the_last_report_marked_final():
    clock = Clock()
    s = session_for("fio-3.33-randread-psync", clock)
    packets = server_packets("fio-3.33-randread-psync")
    stop_at = next(i for i, p in enumerate(packets) if p.packet.opcode == Op.STOP)
    events = replay("fio-3.33-randread-psync", s, clock, upto=stop_at)
    clock.now += 5
    events += s.on_tick()
    last = events[-1]
    assert isinstance(last, Snapshot) and not last.final
    tail = s.on_packet(packets[stop_at].packet) + s.on_packet(packets[stop_at + 1].packet)
    assert isinstance(tail[0], Snapshot) and tail[0].final
    # the same numbers, now with fio's percentile lists (kept as fio's output)
    assert without_percentile_lists(tail[0].jobs) == last.jobs
    assert (
        "percentile" in tail[0].jobs[0]["read"]["clat_ns"]
        and "percentile" in json.loads(tail[0].raw)["client_stats"][0]["read"]["clat_ns"]
    )
    assert tail[1] == Finished("m1", True, "", 0, False)


def stop_packet(error: int, sig: int) -> Packet:
    return Packet(97, Op.STOP, 0, stop_pdu(error, sig))


def test_killed_backend_has_no_final_report_and_names_the_signal():
    clock = Clock()
    s = session_for("fio-3.33-randread-psync", clock, manager="HostA")
    packets = server_packets("fio-3.33-randread-psync")
    second_ts = [i for i, p in enumerate(packets) if p.packet.opcode == Op.TS][1]
    events = replay("fio-3.33-randread-psync", s, clock, upto=second_ts + 3)
    events += s.on_packet(stop_packet(0, 9)) + s.on_packet(Packet(97, Op.QUIT, 0, b""))
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert len(snaps) == 2 and not any(sn.final for sn in snaps)
    fin = events[-1]
    assert isinstance(fin, Finished) and not fin.ok and "SIGKILL" in fin.reason and "HostA" in fin.reason
    assert fin.returncode is None


def test_error_exit_status_is_reported_with_the_server_text():
    s = RunDecoder("m", layout_for(97), "10.0.0.1", 8765)
    events = s.on_packet(
        Packet(97, Op.TEXT, 0, text_pdu("fio: pid=1, err=1/file:x.c:1, func=open\n", LOG_ERR))
    )
    events += s.on_packet(stop_packet(1, 0)) + s.on_packet(Packet(97, Op.QUIT, 0, b""))
    assert events[0] == Message("m", "fio: pid=1, err=1/file:x.c:1, func=open", "error")
    assert not events[-1].ok and "exited with status 1: fio: pid=1" in events[-1].reason
    assert events[-1].returncode == 1


def test_rejected_job_ends_with_quit_and_no_stop():
    s = RunDecoder("m", layout_for(97), "10.0.0.1", 8765)
    events = []
    for text, level in (
        ("Bad option <bogus=1>\n", LOG_ERR),
        ("fio: job bad dropped\n", LOG_ERR),
        ("\n", LOG_INFO),
    ):
        events += s.on_packet(Packet(97, Op.TEXT, 0, text_pdu(text, level)))
    events += s.on_packet(Packet(97, Op.QUIT, 0, b""))
    assert [e.text for e in events if isinstance(e, Message)] == [
        "Bad option <bogus=1>",
        "fio: job bad dropped",
    ]
    fin = events[-1]
    assert isinstance(fin, Finished) and not fin.ok
    assert fin.reason == "fio on m (10.0.0.1:8765) did not run the job: Bad option <bogus=1>"
    assert s.on_packet(Packet(97, Op.QUIT, 0, b"")) == []  # exactly one Finished


def test_disconnect_keeps_samples_and_says_so_plainly():
    clock = Clock()
    s = session_for("fio-3.33-randread-psync", clock, manager="HostB")
    packets = server_packets("fio-3.33-randread-psync")
    second_du = [i for i, p in enumerate(packets) if p.packet.opcode == Op.DU][1]
    events = replay("fio-3.33-randread-psync", s, clock, upto=second_du + 1)
    events += s.on_disconnect()
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert len(snaps) == 2 and not snaps[-1].final
    assert events[-1] == Finished(
        "HostB",
        False,
        "lost connection to manager HostB (127.0.0.1:8800) mid-step; samples so far kept",
        None,
        False,
    )
    assert s.on_disconnect() == []

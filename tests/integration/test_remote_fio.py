"""RemoteFio against real `fio --server` processes (the system's fio, or $FIOMETER_SERVER_FIO) on loopback only."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable

import pytest

from app.engine.transports.fioproto.client import RemoteFio, probe
from app.engine.transports.fioproto.decode import decode_ts
from app.engine.transports.fioproto.frames import FrameReader
from app.engine.transports.fioproto.layouts import LAYOUTS, layout_for, nearest_known
from app.engine.transports.transport import Event, Finished, Message, Snapshot, TransportError
from tests.fio_servers import free_port, protocols_of, server_banner, server_fio
from tests.fioproto_support import as_printed, compare, load_fio_json

pytestmark = [
    pytest.mark.fio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]

# Other fio builds to check as well (e.g. self-built 3.36 / 3.42), separated by os.pathsep. The
# stock-client cross-check and version discovery then also run against those versions.
EXTRA_FIO = [p for p in os.environ.get("FIOMETER_EXTRA_FIO", "").split(os.pathsep) if p]
# builds whose statistics record no known layout has are refused instead (test_remote_protocols.py)
DECODABLE_FIO = [b for b in EXTRA_FIO if "+field" not in b]
FIO_BINARIES = [server_fio(), *DECODABLE_FIO]

NULL_JOB = (
    "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based=1\nruntime={runtime}\n\n[nulljob]\n"
)


def run_all(
    fios: list[RemoteFio], on_event: Callable[[RemoteFio, Event], None] | None = None, timeout: float = 30.0
) -> dict[str, list[tuple[float, Event]]]:
    """Iterate every transport's events in its own thread; returns (monotonic time, event) per manager."""
    q: queue.Queue = queue.Queue()

    def pump(fio: RemoteFio) -> None:
        for ev in fio.events():
            q.put((fio, time.monotonic(), ev))
        q.put((fio, time.monotonic(), None))

    threads = [threading.Thread(target=pump, args=(f,), daemon=True) for f in fios]
    for t in threads:
        t.start()
    out: dict[str, list[tuple[float, Event]]] = {f.name: [] for f in fios}
    done = 0
    deadline = time.monotonic() + timeout
    while done < len(fios):
        fio, t, ev = q.get(timeout=max(0.1, deadline - time.monotonic()))
        if ev is None:
            done += 1
            continue
        out[fio.name].append((t, ev))
        if on_event is not None:
            on_event(fio, ev)
    for t in threads:
        t.join(5)
    return out


def snapshots(events: list[tuple[float, Event]]) -> list[Snapshot]:
    return [e for _, e in events if isinstance(e, Snapshot)]


def test_probe_reports_the_servers_fio_and_its_protocol(fio_server):
    host, port, _ = fio_server("127.0.0.2")
    info = probe(host, port, timeout=5)
    banner = server_banner()
    assert info.fio_version == banner
    assert info.protocol in protocols_of(banner), (banner, info.protocol)
    assert (info.os, info.host, info.port) == ("Linux", host, port)
    assert info.cpus >= 1 and info.hostname


def test_two_servers_stream_live_snapshots_concurrently(fio_server):
    fios = []
    for host in ("127.0.0.2", "127.0.0.3"):
        h, p, _ = fio_server(host)
        fio = RemoteFio(h, p, name=f"mgr-{host}")
        fio.start(NULL_JOB.format(runtime=3), status_interval=1)
        fios.append(fio)
    t0 = time.monotonic()
    result = run_all(fios)
    for fio in fios:
        events = result[fio.name]
        snaps = snapshots(events)
        live = [s for s in snaps if not s.final]
        assert len(live) >= 2, f"{fio.name}: only {len(live)} live snapshots"
        assert [s.final for s in snaps] == [False] * len(live) + [True]
        assert isinstance(events[-1][1], Finished) and events[-1][1].ok, events[-1][1]
        assert sum(isinstance(e, Finished) for _, e in events) == 1
        ios = [s.jobs[0]["read"]["total_ios"] for s in snaps]
        runtimes = [s.jobs[0]["read"]["runtime"] for s in snaps]
        assert ios == sorted(set(ios)) and ios[0] > 0, ios  # strictly growing
        assert runtimes == sorted(set(runtimes)), runtimes
        assert 2900 <= runtimes[-1] <= 3300
        # live: the first report came well before the run ended
        first_t = next(t for t, e in events if isinstance(e, Snapshot))
        last_t = next(t for t, e in reversed(events) if isinstance(e, Snapshot))
        assert first_t - t0 < 0.8 * (last_t - t0)  # reported while running, not all at the end
        job = snaps[-1].jobs[0]
        assert job["jobname"] == "nulljob" and job["hostname"] == fio.host and job["port"] == fio.port
        assert sum(job["read"]["clat_ns"]["bins"].values()) == job["read"]["clat_ns"]["N"]
        assert '"client_stats"' in (snaps[-1].raw or "")
    assert time.monotonic() - t0 < 15


def test_killing_one_server_mid_run_fails_only_that_manager(fio_server):
    host_a, port_a, proc_a = fio_server("127.0.0.2")
    host_b, port_b, _ = fio_server("127.0.0.3")
    a = RemoteFio(host_a, port_a, name="A")
    b = RemoteFio(host_b, port_b, name="B")
    a.start(NULL_JOB.format(runtime=4))
    b.start(NULL_JOB.format(runtime=4))
    killed: list[float] = []

    def on_event(fio: RemoteFio, ev: Event) -> None:
        if fio is a and isinstance(ev, Snapshot) and not killed:
            os.killpg(proc_a.pid, signal.SIGKILL)  # the listener, its connection handler and the backend
            killed.append(time.monotonic())

    result = run_all([a, b], on_event)
    fin_a = result["A"][-1]
    assert killed and isinstance(fin_a[1], Finished)
    assert fin_a[1] == Finished(
        "A",
        False,
        f"lost connection to manager A ({host_a}:{port_a}) mid-step; samples so far kept",
        None,
        False,
    )
    assert fin_a[0] - killed[0] < 3
    assert len(snapshots(result["A"])) >= 1 and not any(s.final for s in snapshots(result["A"]))
    fin_b = result["B"][-1][1]
    assert isinstance(fin_b, Finished) and fin_b.ok
    assert snapshots(result["B"])[-1].final


def test_server_frozen_mid_run_is_caught_by_the_silence_watchdog(fio_server):
    host, port, proc = fio_server("127.0.0.2")
    fio = RemoteFio(host, port, name="F", silence_timeout=3.0)
    fio.start(NULL_JOB.format(runtime=20))
    frozen: list[float] = []

    def on_event(f: RemoteFio, ev: Event) -> None:
        if isinstance(ev, Snapshot) and not frozen:
            os.killpg(proc.pid, signal.SIGSTOP)  # the whole server tree stops answering; TCP stays up
            frozen.append(time.monotonic())

    try:
        events = run_all([fio], on_event, timeout=20)["F"]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGCONT)
    fin_t, fin = events[-1]
    assert isinstance(fin, Finished) and not fin.ok
    assert fin.reason.startswith(f"manager F ({host}:{port}) stopped answering for ")
    assert fin.reason.endswith("mid-step; samples so far kept")
    assert 2.5 < fin_t - frozen[0] < 6
    assert len(snapshots(events)) >= 1


def test_closed_port_is_a_plain_transport_error():
    port = free_port("127.0.0.2")
    with pytest.raises(TransportError) as exc:
        RemoteFio("127.0.0.2", port).start(NULL_JOB.format(runtime=1))
    assert str(exc.value) == f"nothing is listening on 127.0.0.2:{port} — start `fio --server` there"


def test_silent_listener_fails_within_the_timeout():
    with socket.create_server(("127.0.0.2", 0)) as listener:
        port = listener.getsockname()[1]
        accepted: list[socket.socket] = []
        t = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
        t.start()
        fio = RemoteFio("127.0.0.2", port, answer_timeout=2.0)
        t0 = time.monotonic()
        with pytest.raises(TransportError, match="did not answer like a fio server within 2 s"):
            fio.start(NULL_JOB.format(runtime=1))
        assert time.monotonic() - t0 < 20  # no hang: the timeout ends it
        t.join(1)
        assert accepted  # it really connected and was ignored
        for s in accepted:
            s.close()


def test_bad_option_reaches_us_and_the_run_ends_cleanly(fio_server):
    host, port, _ = fio_server("127.0.0.2")
    fio = RemoteFio(host, port, name="bad")
    fio.start("[global]\nioengine=null\nsize=16m\n\n[bad]\nbogus_option=1\n")
    t0 = time.monotonic()
    events = [e for _, e in run_all([fio], timeout=20)["bad"]]
    assert time.monotonic() - t0 < 10
    messages = [e for e in events if isinstance(e, Message)]
    assert any("Bad option <bogus_option=1>" in m.text and m.level == "error" for m in messages), messages
    fin = events[-1]
    assert isinstance(fin, Finished) and not fin.ok
    assert "did not run the job" in fin.reason and "bogus_option" in fin.reason
    assert not any(isinstance(e, Snapshot) for e in events)


def test_stop_ends_the_job_early_with_final_numbers(fio_server):
    host, port, _ = fio_server("127.0.0.2")
    fio = RemoteFio(host, port, name="S")
    fio.start(NULL_JOB.format(runtime=30))
    stop_sent: list[float] = []

    def on_event(f: RemoteFio, ev: Event) -> None:
        if isinstance(ev, Snapshot) and not stop_sent:
            stop_sent.append(time.monotonic())
            f.stop()

    events = run_all([fio], on_event, timeout=20)["S"]
    fin_t, fin = events[-1]
    assert isinstance(fin, Finished) and fin.ok and fin.stopped
    assert fin_t - stop_sent[0] < 5
    final = snapshots(events)[-1]
    assert final.final and final.jobs[0]["read"]["runtime"] < 10000
    # the server is still there and takes the next run
    assert probe(host, port, timeout=5).protocol in protocols_of(server_banner())


STOCK_JOBS = {
    "mixed-desc-errors-numjobs": (
        "[global]\nioengine=null\nsize=64m\nbs=4k\nrw=randrw\nrwmixread=60\nunified_rw_reporting=both\n"
        "lat_percentiles=1\ntime_based=1\nruntime=2\ndescription=hello world\ncontinue_on_error=all\nnumjobs=2\n\n[a]\n"
    ),
    "groups-steadystate": (
        "[global]\nioengine=null\nsize=64m\nbs=4k\nrw=randread\ntime_based=1\nruntime=3\nss=iops_slope:5%\n"
        "ss_dur=2\nss_ramp=0\nnumjobs=2\ngroup_reporting=1\n\n[a]\n\n[b]\nnew_group\nrw=randwrite\n"
    ),
    "io_uring-cmdprio-mixed": (
        "[global]\nioengine=io_uring\niodepth=4\nfilename={data}\nsize=16m\nbs=4k\nrw=randrw\ntime_based=1\n"
        "runtime=2\ncmdprio_percentage=30\ncmdprio_class=2\ncmdprio=0\nlat_percentiles=1\n"
        "unified_rw_reporting=both\n\n[a]\n"
    ),
}


@pytest.mark.parametrize("binary", FIO_BINARIES)
@pytest.mark.parametrize("case", sorted(STOCK_JOBS))
def test_decoder_matches_the_stock_client_live(fio_server, tmp_path, case, binary):
    """Record a stock `fio --client` session through a relay and decode the same bytes ourselves."""
    host, port, _ = fio_server("127.0.0.2", binary)
    job = tmp_path / "job.fio"
    job.write_text(STOCK_JOBS[case].format(data=tmp_path / "data.dat"))
    recorded = bytearray()
    with socket.create_server((host, 0)) as listener:
        relay_port = listener.getsockname()[1]

        def relay() -> None:
            client, _ = listener.accept()
            server = socket.create_connection((host, port))

            def pump(src: socket.socket, dst: socket.socket, keep: bool) -> None:
                while True:
                    try:
                        data = src.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        with contextlib.suppress(OSError):
                            dst.shutdown(socket.SHUT_WR)
                        return
                    if keep:
                        recorded.extend(data)
                    dst.sendall(data)

            back = threading.Thread(target=pump, args=(server, client, True))
            back.start()
            pump(client, server, False)
            back.join(10)
            client.close()
            server.close()

        t = threading.Thread(target=relay, daemon=True)
        t.start()
        out = subprocess.run(
            [
                binary,
                f"--client={host},{relay_port}",
                str(job),
                "--output-format=json+",
                "--status-interval=1",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        t.join(10)
    assert out.returncode == 0, out.stderr
    stock = load_fio_json(out.stdout[out.stdout.index("{") :])
    # fio's own cross-client aggregate ("All clients") is not a job of this host
    expected = [e for e in stock["client_stats"] if e["jobname"] != "All clients"]
    packets = FrameReader().feed(bytes(recorded))
    version = packets[0].version  # a build from the future decodes with the nearest known layout
    layout = layout_for(version) if version in LAYOUTS else nearest_known(version)
    ours = [decode_ts(p.payload, layout, hostname=host, port=relay_port) for p in packets if p.opcode == 6]
    assert len(ours) == len(expected) >= 2
    problems, leaves = compare(as_printed(ours), expected)
    assert problems == []
    assert leaves > 1000


@pytest.mark.skipif(not DECODABLE_FIO, reason="set FIOMETER_EXTRA_FIO to other fio builds to check them too")
@pytest.mark.parametrize("binary", DECODABLE_FIO)
def test_other_fio_versions_are_discovered_and_run(fio_server, binary):
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    host, port, _ = fio_server("127.0.0.3", binary)
    fio = RemoteFio(host, port, name="other")
    fio.start(NULL_JOB.format(runtime=2))  # first contact guesses protocol 97 and learns the real one
    assert fio.info is not None and fio.info.fio_version == version
    events = [e for _, e in run_all([fio])["other"]]
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert isinstance(events[-1], Finished) and events[-1].ok, events[-1]
    assert snaps and snaps[-1].final and snaps[-1].jobs[0]["read"]["runtime"] >= 1900
    assert ("job_start" in snaps[-1].jobs[0]) == (fio.info.protocol >= 101)

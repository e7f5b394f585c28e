"""Issue 35's hostile server, through the real command line: a fake fio server (protocol 97) that replays a
real fio 3.33 session (tests/fixtures/fio-captures) with its thread-status records made hostile: counters of
2^64-1, a NaN, negative or huge latency, an infinite percentile, non-UTF-8 text filling a field with no NUL.
The run fails that manager with the value and the server named (exit 1, not "internal error", exit 5), or
holds what it can hold; either way what was stored reads back through `show --json` and `export`."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys

import pytest

from app.engine.transports.fioproto.commands import Op
from app.engine.transports.fioproto.layouts import layout_for
from app.model import planfile
from app.model.plan import SpecLine, Target
from tests.fioproto_support import FakeServer, accept_job, probe_reply_payload, server_packets, version_gate
from tests.helpers import grid

LAYOUT = layout_for(97)
REPLAYED = {Op.TS, Op.GS, Op.DU, Op.JOB_OPT, Op.SERVER_START, Op.STOP, Op.QUIT}
# every u64 counter of struct thread_stat (not the offsets and counts of the records appended to it)
COUNTERS = tuple(
    n
    for n, slot in LAYOUT.ts.items()
    if slot.kind == "u64" and not n.startswith(("nr_", "ss_")) and "offset" not in n
)


def _named(body: bytearray, jobname: str) -> None:
    name = LAYOUT.ts["name"]
    body[name.offset : name.offset + 128] = jobname.encode().ljust(128, b"\0")


def _counters(body: bytearray) -> None:
    for field in COUNTERS:
        slot = LAYOUT.ts[field]
        for i in range(slot.count):
            struct.pack_into("<Q", body, slot.offset + 8 * i, 2**64 - 1)


def _mean(value: float):
    def put(body: bytearray) -> None:  # struct io_stat: max, min, samples (u64), then mean (a double)
        struct.pack_into("<d", body, LAYOUT.ts["clat_stat"].offset + 24, value)

    return put


def _text(field: str, data: bytes):
    def put(body: bytearray) -> None:  # the whole field, no NUL: as long as the record allows
        slot = LAYOUT.ts[field]
        body[slot.offset : slot.offset + slot.count] = (data * slot.count)[: slot.count]

    return put


def _percentile(value: float):
    def put(body: bytearray) -> None:
        struct.pack_into("<d", body, LAYOUT.ts["percentile_list"].offset, value)

    return put


# what the fake server does to every thread-status record, and what the run must say: the words in its
# output and its exit code (1: the manager failed; 0: the value can be held and the run is complete)
MUTATIONS = {
    "counters at 2^64-1": (_counters, ("sent an impossible value", "18446744073709551615"), 1),
    "a latency mean of NaN": (_mean(math.nan), ("sent an impossible value", "nan"), 1),
    "a negative latency mean": (_mean(-1.5), ("sent an impossible value", "-1.5"), 1),
    "a latency mean of 1e308": (_mean(1e308), ("sent an impossible value", "1e+308"), 1),
    "a percentile of infinity": (_percentile(math.inf), ("cannot read", "percentile_list[0] = inf"), 1),
    "non-UTF-8 error text, 128 bytes long": (_text("verror", b"\xff\xfe"), (), 0),
    "non-UTF-8 job description, 256 bytes long": (_text("description", b"\xc3\x28\x1b[2J"), (), 0),
}


def hostile(payload: bytes, jobname: str) -> bytes:
    body = bytearray(payload)
    _named(body, jobname)
    MUTATION(body)
    return bytes(body)


def handler(conn) -> None:
    probe = version_gate(conn, 97)
    if probe is None:
        return
    conn.send(97, Op.PROBE, probe_reply_payload(), tag=probe.tag)
    if not accept_job(conn, 97):
        return
    job = next(p for p in conn.received if p.opcode == Op.JOB)
    text = job.payload[8:].decode()
    jobname = next(ln.strip("[]") for ln in text.splitlines() if ln.startswith("[") and ln != "[global]")
    packets = [tp.packet for tp in server_packets("fio-3.33-randread-psync")]
    if FINAL_ONLY:  # only the final report, then STOP and QUIT (a run shorter than one report interval)
        last_ts = max(i for i, p in enumerate(packets) if p.opcode == Op.TS)
        packets = [p for p in packets[:last_ts] if p.opcode == Op.SERVER_START] + packets[last_ts:]
    for p in packets:
        if p.opcode in REPLAYED:
            conn.send(97, p.opcode, hostile(p.payload, jobname) if p.opcode == Op.TS else p.payload)


FINAL_ONLY = False
MUTATION = _counters


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.fio
@pytest.mark.parametrize("final_only", [False, True], ids=["every report", "the final report alone"])
@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_any_value_a_server_sends_fails_the_manager_or_is_held_by_every_sink(
    tmp_path, monkeypatch, final_only, mutation
):
    """Each value, in every report or in the final one alone, through the command line's run (the reports
    decoded in its child process and pickled to the runner), the store, `show --json` and both exports."""
    mutate, words, code = MUTATIONS[mutation]
    monkeypatch.setattr(sys.modules[__name__], "FINAL_ONLY", final_only)
    monkeypatch.setattr(sys.modules[__name__], "MUTATION", mutate)
    server = FakeServer(handler)
    try:
        plan = grid(1, 1, 1)
        plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
        plan.managers[0].host = None
        plan.managers[0].workers[0].targets = [Target("/dev/sdz")]  # a device: no test-file probe, read only
        planfile.save(plan, tmp_path / "plan.json")
        db = str(tmp_path / "r.db")
        where = f"127.0.0.1:{server.port}"
        out = cli(
            "run", str(tmp_path / "plan.json"), "--manager", f"M1={where}", "--run-time", "2", "--db", db
        )
    finally:
        server.close()
    text = out.stdout + out.stderr
    print(text[-600:])
    assert out.returncode == code, text
    assert "internal error" not in text and "Traceback" not in text
    if code:  # the manager failed, the server and the value named
        assert f"manager M1 ({where}) sent " in text and "its step failed" in text, text
    assert all(w in text for w in words), (words, text)
    shown = cli("show", "1", "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    shown_run = json.loads(shown.stdout)
    assert shown_run
    if not code:  # held: the run's steps and fio's final output stored and shown
        assert "complete" in json.dumps(shown_run), shown.stdout[:800]
    for kind in ("--samples", "--iometer-csv"):
        exported = cli("export", "1", kind, str(tmp_path / f"out{kind}.csv"), "--db", db)
        assert exported.returncode == 0, exported.stdout + exported.stderr

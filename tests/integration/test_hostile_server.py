"""Issue 35's hostile server, through the real command line: a fake fio server (protocol 97) that replays a
real fio 3.33 session (tests/fixtures/fio-captures) with its thread-status counters set to 2^64-1. The run
fails that manager with the value and the server named (exit 1, not "internal error", exit 5), and what was
stored reads back through `show --json` and `export`."""

from __future__ import annotations

import json
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


def hostile(payload: bytes, jobname: str) -> bytes:
    body = bytearray(payload)
    name = LAYOUT.ts["name"]
    body[name.offset : name.offset + 128] = jobname.encode().ljust(128, b"\0")
    for field in COUNTERS:
        slot = LAYOUT.ts[field]
        for i in range(slot.count):
            struct.pack_into("<Q", body, slot.offset + 8 * i, 2**64 - 1)
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


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.fio
@pytest.mark.parametrize("final_only", [False, True], ids=["every report", "the final report alone"])
def test_counters_of_2_64_minus_1_fail_the_manager_and_every_sink_holds(tmp_path, monkeypatch, final_only):
    monkeypatch.setattr(sys.modules[__name__], "FINAL_ONLY", final_only)
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
    assert out.returncode == 1, text
    assert "internal error" not in text and "Traceback" not in text
    assert f"M1 ({where}) sent an impossible value" in text and "18446744073709551615" in text
    shown = cli("show", "1", "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)
    for kind in ("--samples", "--iometer-csv"):
        exported = cli("export", "1", kind, str(tmp_path / f"out{kind}.csv"), "--db", db)
        assert exported.returncode == 0, exported.stdout + exported.stderr

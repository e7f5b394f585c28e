"""Recorded real fio 3.33 runs with disk statistics (tests/fixtures/disk-stats, see PROVENANCE.md)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

from app.engine.transports.fioproto.decoder import RunDecoder
from app.engine.transports.fioproto.layouts import layout_for
from app.engine.transports.transport import Snapshot
from tests.fioproto_recording import SERVER_TO_CLIENT, read_packets

DISK_FIXTURES = Path(__file__).parent / "fixtures" / "disk-stats"
REMOTE = "fio-3.33-loop-randrw"


def local_documents(name: str) -> list[dict[str, Any]]:
    text = gzip.decompress((DISK_FIXTURES / f"{name}.stdout.gz").read_bytes()).decode()
    dec = json.JSONDecoder()
    return [dec.raw_decode(text, m.start())[0] for m in re.finditer(r"(?m)^\{$", text)]


def local_snapshots(name: str, manager: str = "m1") -> list[Snapshot]:
    """As LocalFio delivers them: received at fio's own report times (timestamp_ms), the last final."""
    docs = local_documents(name)
    t0 = docs[0]["timestamp_ms"] / 1000.0 - 1.0
    return [
        Snapshot(
            manager,
            100.0 + d["timestamp_ms"] / 1000.0 - t0,
            d["jobs"],
            d.get("disk_util") or [],
            final=i == len(docs) - 1,
            fio_ms=d["timestamp_ms"],
        )
        for i, d in enumerate(docs)
    ]


def remote_packets(tmp: Path, name: str = REMOTE) -> list:
    """The server's messages of the recording (unpacked into ``tmp``, as read_packets reads files)."""
    path = tmp / f"{name}.cap"
    path.write_bytes(gzip.decompress((DISK_FIXTURES / f"{name}.cap.gz").read_bytes()))
    return [p for p in read_packets(path) if p.direction == SERVER_TO_CLIENT]


def remote_snapshots(tmp: Path, manager: str = "m2", name: str = REMOTE) -> list[Snapshot]:
    """The recording played through RunDecoder, as RemoteFio delivers it."""
    packets = remote_packets(tmp, name)
    now = [100.0]
    session = RunDecoder(
        manager, layout_for(packets[0].packet.version), "127.0.0.3", 8798, clock=lambda: now[0]
    )
    out = []
    for tp in packets:
        now[0] = 100.0 + tp.time
        out += session.on_tick() + session.on_packet(tp.packet)
    now[0] += 5.0
    out += session.on_tick()
    return [e for e in out if isinstance(e, Snapshot)]


def stock_client_json(name: str = REMOTE) -> dict[str, Any]:
    return json.loads(gzip.decompress((DISK_FIXTURES / f"{name}.json.gz").read_bytes()))

"""Access to the recorded fio 3.33 outputs in tests/fixtures/fio-3.33 (see its README)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from app.engine.transports.transport import Snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "fio-3.33"


def stdout(name: str) -> bytes:
    return (FIXTURES / f"{name}.stdout").read_bytes()


def stderr(name: str) -> str:
    return (FIXTURES / f"{name}.stderr").read_text()


def documents(name: str) -> list[dict[str, Any]]:
    """The JSON documents of a recording, found independently of FioJsonStream (raw_decode)."""
    text = stdout(name).decode()
    dec = json.JSONDecoder()
    return [dec.raw_decode(text, m.start())[0] for m in re.finditer(r"(?m)^\{$", text)]


def snapshots(name: str, manager: str = "m", *, step: float = 1.0, rename: str = "") -> list[Snapshot]:
    """The recording as a transport would deliver it: one Snapshot per document, the last final.
    ``rename`` prefixes job names (to play the same recording as a second manager)."""
    docs = documents(name)
    out = []
    for i, doc in enumerate(docs):
        jobs = [dict(j, jobname=rename + j["jobname"]) for j in doc["jobs"]]
        out.append(
            Snapshot(manager, 100.0 + i * step, jobs, doc.get("disk_util", []), final=i == len(docs) - 1)
        )
    return out

"""A timed-transfer (dd-style) comparison as one table (Qt-free): per transfer step, its block size and
direction, the bytes moved, and each side's elapsed time and MB/s, with the change in elapsed time - the
layout of a published dd before/after ("4 GiB at 64 KiB: 3 min 36 s, 19.9 MB/s → 38.8 s, 111 MB/s").

Steps pair as the comparison paired them (definition and place in the sequence), so a plan that times the
same transfer at four block sizes gives four rows."""

from __future__ import annotations

from app.analysis.compare import Comparison
from app.analysis.timed_transfer import Transfer, transfers
from app.model.spec_words import parse_spec_text
from app.model.units import format_bytes, format_elapsed
from app.report.tables import Cell, Column, Row, Table, metric, pct_cell
from app.store.records import Run, StepInfo

ELAPSED_FORMAT = "[h]:mm:ss.000"  # a spreadsheet shows the elapsed time as a duration


def block_and_direction(step: StepInfo) -> tuple[int | None, str]:
    """The main line's transfer size and "read" / "write" / "70 % read" (None, "" without a stored definition)."""
    specs = parse_spec_text(step.spec_text) or []
    lines = [ln for spec in specs for ln in spec]
    if not lines:
        return None, ""
    main = max(lines, key=lambda ln: ln.of_size)
    direction = "read" if main.reads == 100 else "write" if main.reads == 0 else f"{main.reads} % read"
    return main.size, direction


def elapsed_text(seconds: float) -> str:
    """A transfer's time as people say it; under 0.1 s in milliseconds (not "0.00 s")."""
    return f"{seconds * 1000:.3g} ms" if seconds < 0.1 else format_elapsed(seconds)


def _elapsed(t: Transfer | None) -> Cell:
    if t is None:
        return Cell("\u2013")
    return Cell(elapsed_text(t.seconds), t.seconds / 86400, None, ELAPSED_FORMAT)


def _mbps(t: Transfer | None) -> Cell:
    return metric(t.bytes / t.seconds / 1e6 if t is not None and t.seconds else None)


def transfer_table(
    c: Comparison, number: int, labels: tuple[str, str], runs: tuple[Run, Run], mark=None
) -> Table | None:
    """The paired transfer steps of both sides, or None when neither run is a timed transfer. ``mark``
    (percent change -> "better" / "worse" / None) marks the elapsed-time change."""
    by_side = [{t.step: t for t in transfers(r)} for r in runs]
    if not any(by_side):
        return None
    steps = {s.index: s for s in runs[0].steps}
    rows = []
    for r in c.rows:
        x, y = by_side[0].get(r.baseline.index), by_side[1].get(r.candidate.index)
        if x is None and y is None:
            continue
        size, direction = (
            block_and_direction(steps[r.baseline.index]) if r.baseline.index in steps else (None, "")
        )
        moved = {t.bytes for t in (x, y) if t is not None}
        bytes_text = " / ".join(format_bytes(b) for b in sorted(moved))
        change = (
            (y.seconds - x.seconds) / x.seconds * 100
            if x is not None and y is not None and x.seconds
            else None
        )
        rows.append(
            Row(
                [
                    Cell(r.spec, r.spec),
                    Cell(r.load, r.load),
                    Cell(format_bytes(size), size) if size else Cell("\u2013"),
                    Cell(direction, direction),
                    Cell(bytes_text, min(moved) if len(moved) == 1 else bytes_text),
                    _elapsed(x),
                    _mbps(x),
                    _elapsed(y),
                    _mbps(y),
                    pct_cell(change, mark(change) if mark else None),
                ]
            )
        )
    if not rows:
        return None
    base, cand = labels
    cols = [
        Column("Transfer"),
        Column("Load"),
        Column("Block size", True),
        Column("I/O"),
        Column("Bytes", True),
        Column(f"{base} elapsed", True),
        Column(f"{base} MB/s", True),
        Column(f"{cand} elapsed", True),
        Column(f"{cand} MB/s", True),
        Column("Elapsed change %", True),
    ]
    return Table(
        f"transfers-{number}",
        f"Transfers: {base} and {cand}",
        cols,
        rows,
        [
            "Each step moves a fixed number of bytes and is timed by fio's own runtime (the test-file layout "
            "before the first I/O is not counted); MB/s is those bytes over that time (1 MB = 10\u2076 bytes). "
            "A shorter elapsed time is better."
        ],
    )

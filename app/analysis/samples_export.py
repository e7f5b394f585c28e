"""Every per-second sample of a stored run in long form (one row per step, time and level), so anyone can
plot or check the numbers themselves: ``fiometer export RUN --samples FILE.csv``.

The file is made a stretch of each step at a time (``samples_csv_chunks``): memory stays flat however
long the run is."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import numpy as np

from app.analysis.csv_safe import safe_cell
from app.model.metrics import MB
from app.store.blocks import BLOCK_COLUMNS
from app.store.database import Store
from app.store.queries import step_samples_by_stretch
from app.store.records import Run

COLUMNS = (
    "run",
    "step",
    "spec",
    "t_s",
    "interval_s",
    "level",
    "manager",
    "name",
    "iops",
    "read_iops",
    "write_iops",
    "mbps",
    "read_mbps",
    "write_mbps",
    "lat_mean_ms",
    "read_lat_mean_ms",
    "write_lat_mean_ms",
    "lat_max_ms",
    "errors",
)
LEVEL_ORDER = {"all": 0, "manager": 1, "worker": 2, "target": 3}
STRETCH_S = 300.0  # seconds of a step read and written at a time
BOM = "\ufeff"  # the file starts with one, so that spreadsheet programs read it as UTF-8


def display_names(run: Run) -> dict[tuple[str, str | None, str], str]:
    """(level, manager, key) -> the name the plan gives a worker or target (keys elsewhere are names)."""
    out: dict[tuple[str, str | None, str], str] = {}
    for w in run.workers:
        out[("worker", w.manager, w.key)] = w.name or w.key
    for t in run.targets:
        out[("target", t.manager, t.key)] = t.name or t.key
    return out


def _g10(values: Any) -> list[str]:
    """Each value as the export has always written it, ``repr(float(f"{v:.10g}"))``, at a fraction of its
    cost: each distinct value once (a target repeats its worker's numbers, every series the same seconds),
    and ``.10g``'s own text but for a whole number (no ".0") and an exponent form (repr has its own range;
    rare here), which alone take the slow way."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)  # by bits: 0.0 and -0.0 apart
    distinct, where = np.unique(bits, return_inverse=True)
    text = [f"{v:.10g}" for v in distinct.view(np.float64).tolist()]
    text = [repr(float(x)) if "e" in x else (x if "." in x or "n" in x else x + ".0") for x in text]
    return [text[i] for i in where.tolist()]


_C = {name: i for i, name in enumerate(BLOCK_COLUMNS)}


def _series_numbers(cols: list[Any]) -> list[Any]:
    """One series' numeric columns: t_s and interval_s, the metrics from iops to lat_max_ms, then errors,
    computed as ``Metrics`` computes them."""

    def f(name: str) -> Any:
        return np.asarray(cols[_C["i_" + name]])

    def mean_ms(total: Any, n: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n != 0, total / np.where(n != 0, n, 1) / 1e6, 0.0)

    r_iops, w_iops, r_bps, w_bps = f("read_iops"), f("write_iops"), f("read_bps"), f("write_bps")
    r_sum, w_sum, r_n, w_n = f("read_lat_sum_ns"), f("write_lat_sum_ns"), f("read_lat_n"), f("write_lat_n")
    return [
        np.asarray(cols[_C["t"]], dtype=np.float64),
        f("seconds"),
        r_iops + w_iops,
        r_iops,
        w_iops,
        (r_bps + w_bps) / MB,
        r_bps / MB,
        w_bps / MB,
        mean_ms(r_sum + w_sum, r_n + w_n),
        mean_ms(r_sum, r_n),
        mean_ms(w_sum, w_n),
        np.maximum(f("read_lat_max_ns"), f("write_lat_max_ns")) / 1e6,
        f("errors"),
    ]


def _error_cells(errors: Any) -> list[str]:
    values = errors.tolist()
    return list(map(str, values)) if errors.dtype.kind in "iu" else [safe_cell(v) for v in values]


def _text_cells(*cells: object) -> str:
    """Text cells as the csv module writes them (quoted where needed), formulas neutralised."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow([safe_cell(c) for c in cells])
    return buf.getvalue()


def samples_csv_chunks(store: Store, run: Run, stretch_s: float = STRETCH_S) -> Iterator[str]:
    """The CSV text piece by piece (the header first, then a stretch of a step at a time): the interval
    window of every series, ordered by step, time, then level (ALL first), manager and key. A stretch's
    numbers are computed a column at a time and its lines put in order by one stable sort."""
    yield _text_cells(*COLUMNS) + "\r\n"
    names = display_names(run)
    for s in run.steps:
        head = _text_cells(run.id, s.index + 1, s.spec_name)
        for stretch in step_samples_by_stretch(store, s.id, stretch_s):
            order = sorted(
                range(len(stretch)),
                key=lambda j: (LEVEL_ORDER.get(stretch[j][0], 9), stretch[j][1] or "", stretch[j][2]),
            )
            numbers: list[list[Any]] = []
            whos: list[str] = []
            ranks: list[Any] = []
            for rank, j in enumerate(order):
                level, manager, key, cols = stretch[j]
                numbers.append(_series_numbers(cols))
                whos.append(_text_cells(level, manager or "", names.get((level, manager, key), key)))
                ranks.append(np.full(len(cols[0]), rank))
            if not numbers:
                continue
            columns = [np.concatenate(c) for c in zip(*numbers, strict=True)]
            # by time, then the series' rank; stable, so that a series' own order is kept
            at = np.lexsort((np.concatenate(ranks), columns[0]))
            columns = [c[at] for c in columns]
            who = np.repeat(np.arange(len(whos)), [len(n[0]) for n in numbers])[at].tolist()
            t, iv, *rest = [_g10(c) for c in columns[:-1]]
            cells = map(",".join, zip(*rest, _error_cells(columns[-1]), strict=True))
            lines = [
                f"{head},{a},{b},{whos[w]},{m}\r\n" for a, b, w, m in zip(t, iv, who, cells, strict=True)
            ]
            for a in range(0, len(lines), 8192):
                yield "".join(lines[a : a + 8192])


def samples_csv_bytes(store: Store, run: Run, stretch_s: float = STRETCH_S) -> Iterator[bytes]:
    """``samples_csv_chunks`` as the file's bytes: UTF-8 with a byte order mark."""
    yield BOM.encode("utf-8")
    for chunk in samples_csv_chunks(store, run, stretch_s):
        yield chunk.encode("utf-8")


def samples_csv(store: Store, run: Run) -> str:
    """The whole CSV as one string (a short run; a long one is better written with ``samples_csv_bytes``)."""
    return "".join(samples_csv_chunks(store, run))

"""The read side (history, run details, time series) and the user's edits to finished runs."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import suppress
from typing import Any, Final

from app.model.metrics import Metrics
from app.process_owner import ProcessOwner, owner_is_gone

from .abandoned import close_abandoned_runs
from .blocks import (
    BLOCK_COLUMNS,
    columns_as_rows,
    series_arrays,
    series_arrays_between,
    series_rows,
    series_span,
)
from .codec import metrics_from, metrics_read_later, unpack_text
from .database import Store
from .errors import RunNotFound, StoreError
from .hist_blocks import series_hists
from .records import (
    ManagerInfo,
    MessageInfo,
    ResultRow,
    Run,
    RunListing,
    StepInfo,
    StepOutput,
    TargetInfo,
    WorkerInfo,
)
from .schema import METRIC_COLUMNS, RUN_STATUSES

_M = [name for name, _ in METRIC_COLUMNS]
_SUMMARY_COLUMNS = (
    "runs.id, uuid, name, description, status, started, ended, plan_name, plan_sha256, notes, "
    "(SELECT json_group_array(tag) FROM (SELECT tag FROM run_tags WHERE run_id = runs.id ORDER BY tag)), "
    "(SELECT count(*) FROM steps WHERE run_id = runs.id)"
)
WINDOWS = ("interval", "whole")


class _AnyManager:
    def __repr__(self) -> str:
        return "ANY_MANAGER"


ANY_MANAGER: Final = _AnyManager()


def list_runs(
    store: Store,
    *,
    text: str | None = None,
    tag: str | None = None,
    status: str | Iterable[str] | None = None,
    limit: int | None = None,
) -> list[RunListing]:
    """Runs, newest first. ``text`` matches name, description, plan name and notes (any case);
    ``tag`` one tag exactly (any case); ``status`` one status or several. Runs whose recording process
    died are marked interrupted first."""
    close_abandoned_runs(store)
    where, args = [], []
    if text:
        like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append(
            "("
            + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in ("name", "description", "plan_name", "notes"))
            + ")"
        )
        args += [like] * 4
    if tag:
        where.append("EXISTS (SELECT 1 FROM run_tags WHERE run_id = runs.id AND tag = ?)")
        args.append(tag)
    if status is not None:
        wanted = [status] if isinstance(status, str) else list(status)
        unknown = set(wanted) - set(RUN_STATUSES)
        if unknown:
            raise ValueError(f"unknown run status {sorted(unknown)}; statuses are {RUN_STATUSES}")
        where.append(f"status IN ({', '.join('?' * len(wanted))})")
        args += wanted
    sql = f"SELECT {_SUMMARY_COLUMNS} FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY started DESC, id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    with store.read("listing runs") as conn:
        return [_summary(row) for row in conn.execute(sql, args)]


def get_run(
    store: Store, run_id: int, *, raw_output: bool = False, result_levels: Iterable[str] | None = None
) -> Run:
    """Everything about one run: managers, workers, targets, steps with outputs, messages and results.
    fio's raw final output (large, and nothing shown needs it) only with ``raw_output``; only the results
    of ``result_levels`` when given (e.g. ("all", "manager") for a summary)."""
    with store.read("reading a run") as conn:
        row = conn.execute(f"SELECT {_SUMMARY_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(f"There is no run {run_id} in {store.path}; it may have been deleted.")
        plan_json, host_json, pid, host, token = conn.execute(
            "SELECT plan_json, host_json, owner_pid, owner_host, owner_token FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        run = Run(
            **vars(_summary(row)),
            plan_json=plan_json,
            host=json.loads(host_json),
            owner=ProcessOwner(pid, host, token) if pid is not None else None,
        )
        run.managers = [
            ManagerInfo(*r)
            for r in conn.execute(
                "SELECT name, address, os, fio_version, protocol FROM managers WHERE run_id = ? ORDER BY position",
                (run_id,),
            )
        ]
        run.workers = [
            WorkerInfo(m, k, n, json.loads(d))
            for m, k, n, d in conn.execute(
                "SELECT manager, key, name, details_json FROM workers WHERE run_id = ? ORDER BY position",
                (run_id,),
            )
        ]
        run.targets = [
            TargetInfo(m, w, k, n, p, json.loads(d))
            for m, w, k, n, p, d in conn.execute(
                "SELECT manager, worker, key, name, path, details_json FROM targets WHERE run_id = ? "
                "ORDER BY position",
                (run_id,),
            )
        ]
        steps: dict[int, StepInfo] = {}
        for r in conn.execute(
            "SELECT id, run_id, idx, spec_name, spec_text, queue_depth, active_workers_json, "
            "active_targets_json, ramp_s, run_s, started, ended, status FROM steps WHERE run_id = ? "
            "ORDER BY idx",
            (run_id,),
        ):
            steps[r[0]] = _step_info(r)
        run.steps = list(steps.values())
        for step_id, manager, job_text, raw in conn.execute(
            f"SELECT step_id, manager, job_text, {'raw_output' if raw_output else 'NULL'} FROM step_outputs "
            "JOIN steps ON steps.id = step_id WHERE run_id = ? ORDER BY manager",
            (run_id,),
        ):
            steps[step_id].outputs[manager] = StepOutput(job_text, unpack_text(raw))
        for at, level, text, manager, step_id in conn.execute(
            "SELECT at, level, text, manager, step_id FROM messages WHERE run_id = ? ORDER BY id", (run_id,)
        ):
            message = MessageInfo(at, level, text, manager, step_id)
            (steps[step_id].messages if step_id is not None else run.messages).append(message)
        for step_id, row in _results(conn, "steps.run_id = ?", run_id, result_levels):
            steps[step_id].results.append(row)
    return run


def step_results(store: Store, step_id: int) -> list[ResultRow]:
    """Every level's results of one step (what ``get_run`` gives ``StepInfo.results``): a report reads a
    long run's workers and targets a step at a time, never all of them at once."""
    with store.read("reading a step's results") as conn:
        return [row for _, row in _results(conn, "series.step_id = ?", step_id, None, later=True)]


class StepResults:
    """A step's results of every level, read when asked (a report's data sheet and CSV, written after the
    report was built): from the store the report was built with while it is open on this thread, else from
    a read-only connection of this reader's own to the same file, opened once per thread."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._own: dict[int, Store] = {}

    def __call__(self, step: StepInfo) -> list[ResultRow]:
        store = self._store
        if not store.usable_here:
            from .database import open_store_readonly

            here = threading.get_ident()
            if here not in self._own:
                self._own[here] = open_store_readonly(store.path)[0]
            store = self._own[here]
        return step_results(store, step.id)

    def close_here(self) -> None:
        """Close the connection this thread opened, if any: SQLite's connections are closed by their own
        thread (closed from another in ``__del__``, they stayed open: Python 3.13's ResourceWarning)."""
        own = self._own.pop(threading.get_ident(), None)
        if own is not None:
            own.close()

    def __del__(self) -> None:
        for own in self._own.values():
            with suppress(Exception):
                own.close()


def _results(
    conn: sqlite3.Connection, where: str, arg: int, levels: Iterable[str] | None, later: bool = False
) -> Iterator[tuple[int, ResultRow]]:
    """(step id, result) of the results matching ``where`` (with its one argument), in the order stored;
    ``later``: their histograms decoded only when read (``codec.StoredHist``)."""
    wanted = None if levels is None else list(levels)
    n = len(_M)
    made = metrics_read_later if later else metrics_from
    for r in conn.execute(
        f"SELECT series.step_id, manager, level, key, {', '.join(_M)}, read_hist, write_hist "
        "FROM results JOIN series ON series.id = results.series_id JOIN steps ON steps.id = series.step_id "
        f"WHERE {where}"
        + ("" if wanted is None else f" AND level IN ({', '.join('?' * len(wanted))})")
        + " ORDER BY series.id",
        (arg, *(wanted or ())),
    ):
        yield r[0], ResultRow(r[1], r[2], r[3], made(r[4 : 4 + n], r[4 + n], r[5 + n]))


def with_raw_outputs(store: Store, run: Run) -> Run:
    """``run`` as ``get_run(raw_output=True)`` reads it, from the run already read: only fio's final outputs
    are read (its results, with their histograms, are shared, not read and decoded again)."""
    raw: dict[tuple[int, str], str | None] = {}
    with store.read("reading fio's outputs") as conn:
        for step_id, manager, data in conn.execute(
            "SELECT step_id, manager, raw_output FROM step_outputs JOIN steps ON steps.id = step_id "
            "WHERE run_id = ?",
            (run.id,),
        ):
            raw[(step_id, manager)] = unpack_text(data)
    steps = [
        dataclasses.replace(
            s,
            outputs={
                m: StepOutput(o.job_text, raw.get((s.id, m), o.raw_output)) for m, o in s.outputs.items()
            },
        )
        for s in run.steps
    ]
    return dataclasses.replace(run, steps=steps)


def step_series(store: Store, step_id: int) -> list[tuple[str, str | None, str]]:
    """What was measured in a step: (level, manager, key) in the order telemetry first reported them."""
    with store.read("reading a step") as conn:
        return [
            (level, manager, key)
            for level, manager, key in conn.execute(
                "SELECT level, manager, key FROM series WHERE step_id = ? ORDER BY id", (step_id,)
            )
        ]


def step_samples(
    store: Store,
    step_id: int,
    level: str,
    key: str,
    window: str = "interval",
    *,
    manager: str | None | _AnyManager = ANY_MANAGER,
    histograms: bool = True,
) -> list[tuple[float, Metrics]]:
    """A time series of one level's samples in a step: (t, Metrics) by t. ``window`` "interval" gives
    per-interval numbers, "whole" the step so far. Give ``manager`` when keys repeat across managers.
    Histograms come back where they were kept (interval window, ``Recorder.sample_hist_levels``), unless
    ``histograms`` is False (a chart of rates and means: most of a long step's reading time)."""
    if window not in WINDOWS:
        raise ValueError(f"window {window!r} is not one of {WINDOWS}")
    sql = "SELECT coalesce(same_as, id) FROM series WHERE step_id = ? AND level = ? AND key = ?"
    args: list[Any] = [step_id, level, key]
    if not isinstance(manager, _AnyManager):
        sql += " AND manager IS ?"
        args.append(manager)
    with store.read("reading samples") as conn:
        ids = [r[0] for r in conn.execute(sql, args)]
        if len(ids) > 1:
            raise ValueError(
                f"{level} {key!r} exists under several managers in step {step_id}; pass manager="
            )
        if not ids:
            return []
        rows = series_rows(conn, ids[0])
        hists = (
            {t: (r, w) for t, r, w in series_hists(conn, ids[0])}
            if window == "interval" and histograms
            else {}
        )
    n = len(_M)
    first = 1 if window == "interval" else 1 + n
    out = []
    for r in rows:
        m = metrics_from(r[first : first + n])
        if r[0] in hists:
            m.read_hist, m.write_hist = (
                dict(zip(b.tolist(), c.tolist(), strict=True)) for b, c in hists[r[0]]
            )
        out.append((r[0], m))
    return out


_IOS_COLUMNS = [BLOCK_COLUMNS.index(c) for c in ("t", "i_read_ios", "i_write_ios", "i_seconds")]
_RATE_COLUMNS = [
    BLOCK_COLUMNS.index(c)
    for c in ("t", "i_read_ios", "i_write_ios", "i_read_bytes", "i_write_bytes", "i_seconds")
]


def steps_interval_ios(
    store: Store, step_ids: Iterable[int], level: str, key: str
) -> dict[int, list[tuple[float, Any, Any]]]:
    """Per step: (t, I/Os, seconds) of each interval sample of one level's series (a key that does not
    repeat across managers, e.g. ALL), by t: the numbers ``step_samples`` gives as ``Metrics.ios`` and
    ``seconds``, read as arrays without building a Metrics or decoding a histogram per sample (an 8-hour
    run's 28,800 ALL samples: 0.1 s instead of 4 s). Steps without such a series are absent."""
    return {
        step: [(t, r + w, s) for t, r, w, s in rows]
        for step, rows in _steps_interval_columns(store, step_ids, level, key, _IOS_COLUMNS).items()
    }


def steps_interval_rates(
    store: Store, step_ids: Iterable[int], level: str, key: str
) -> dict[int, list[tuple[float, Any, Any, Any]]]:
    """``steps_interval_ios`` with the bytes too: per step, (t, I/Os, bytes, seconds) of each interval."""
    return {
        step: [(t, ri + wi, rb + wb, s) for t, ri, wi, rb, wb, s in rows]
        for step, rows in _steps_interval_columns(store, step_ids, level, key, _RATE_COLUMNS).items()
    }


def _steps_interval_columns(
    store: Store, step_ids: Iterable[int], level: str, key: str, columns: list[int]
) -> dict[int, list[tuple[Any, ...]]]:
    out: dict[int, list[tuple[Any, ...]]] = {}
    with store.read("reading samples") as conn:
        for step_id in step_ids:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT coalesce(same_as, id) FROM series WHERE step_id = ? AND level = ? AND key = ?",
                    (step_id, level, key),
                )
            ]
            if len(ids) != 1:
                if len(ids) > 1:
                    raise ValueError(f"{level} {key!r} exists under several managers in step {step_id}")
                continue
            cols = series_arrays(conn, ids).get(ids[0])
            if cols is None:
                out[step_id] = []
                continue
            out[step_id] = columns_as_rows([cols[i] for i in columns])
    return out


StretchSeries = tuple[str, "str | None", str, list[Any]]  # (level, manager, key, BLOCK_COLUMNS arrays)


def step_samples_by_stretch(
    store: Store, step_id: int, stretch_s: float = 300.0
) -> Iterator[list[StretchSeries]]:
    """Every series' samples of a step, a stretch of ``stretch_s`` seconds of the step at a time: per
    stretch, each series with samples in it as ``blocks.BLOCK_COLUMNS`` arrays by t (``sample_rows``
    makes their numbers), series in the order telemetry first reported them. A reader of an
    8-hour step never holds more than a stretch, and that as arrays. Each stretch is read in its own
    transaction."""
    with store.read("reading samples") as conn:
        series = conn.execute(
            "SELECT id, coalesce(same_as, id), level, manager, key FROM series WHERE step_id = ? ORDER BY id",
            (step_id,),
        ).fetchall()
        own = list(dict.fromkeys(o for _i, o, *_k in series))
        span = series_span(conn, own)
    if span is None:
        return
    lo = float(int(span[0] // stretch_s) * stretch_s)
    while lo <= span[1]:
        hi = lo + stretch_s
        with store.read("reading samples") as conn:
            arrays = series_arrays_between(conn, own, lo, hi)
        yield [(level, manager, key, arrays[o]) for _sid, o, level, manager, key in series if o in arrays]
        lo = hi


def sample_rows(cols: list[Any], chunk: int = 64) -> Iterator[tuple[Any, ...]]:
    """A series' arrays as ``step_samples`` reads its samples: tuples of Python values (None for NULL) in
    ``blocks.BLOCK_COLUMNS`` order, made ``chunk`` at a time."""
    for a in range(0, len(cols[0]), chunk):
        yield from columns_as_rows([c[a : a + chunk] for c in cols])


def interval_metrics(row: tuple[Any, ...]) -> Metrics:
    """The interval window of one of ``sample_rows`` (no histograms)."""
    return metrics_from(row[1 : 1 + len(_M)])


def rename_run(store: Store, run_id: int, name: str) -> None:
    _update_run(store, run_id, "renaming a run", "name = ?", name)


def annotate_run(store: Store, run_id: int, notes: str | None = None, description: str | None = None) -> None:
    """Replace the run's notes and/or description (None leaves one as it is)."""
    _update_run(
        store,
        run_id,
        "saving notes",
        "notes = coalesce(?, notes), description = coalesce(?, description)",
        notes,
        description,
    )


def tag_run(store: Store, run_id: int, add: Iterable[str] = (), remove: Iterable[str] = ()) -> None:
    with store.write("tagging a run") as conn:
        _require_run(conn, store, run_id)
        conn.executemany("DELETE FROM run_tags WHERE run_id = ? AND tag = ?", [(run_id, t) for t in remove])
        conn.executemany(
            "INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?, ?)", [(run_id, t) for t in add if t]
        )


def delete_run(store: Store, run_id: int) -> None:
    """Delete a run and everything recorded for it; refused while a live process is still recording it."""
    with store.write("deleting a run") as conn:
        row = conn.execute(
            "SELECT status, owner_pid, owner_host, owner_token FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFound(f"There is no run {run_id} in {store.path}; it may have been deleted already.")
        status, pid, host, token = row
        if status == "running" and pid is not None and not owner_is_gone(ProcessOwner(pid, host, token)):
            raise StoreError(
                f"Run {run_id} is still being recorded (by process {pid} on {host}). "
                "Stop it before deleting it."
            )
        conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
    # Give the freed pages back to the file system. executescript, because execute() frees one page per
    # call; best effort, as the run is already gone and the next deletion retries.
    with suppress(sqlite3.Error):
        store.conn.executescript("PRAGMA incremental_vacuum;")


def _update_run(store: Store, run_id: int, doing: str, assignments: str, *args: Any) -> None:
    with store.write(doing) as conn:
        if not conn.execute(f"UPDATE runs SET {assignments} WHERE id = ?", (*args, run_id)).rowcount:
            raise RunNotFound(f"There is no run {run_id} in {store.path}; it may have been deleted.")


def _require_run(conn: sqlite3.Connection, store: Store, run_id: int) -> None:
    if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        raise RunNotFound(f"There is no run {run_id} in {store.path}; it may have been deleted.")


def _step_info(r: tuple[Any, ...]) -> StepInfo:
    """A steps row (id, run_id, idx, spec_name, spec_text, queue_depth, workers, targets as JSON, ramp_s, run_s,
    started, ended, status) as a StepInfo."""
    lists = json.loads(r[6]), json.loads(r[7])
    return StepInfo(r[0], r[1], r[2], r[3], r[4], r[5], *lists, r[8], r[9], r[10], r[11], r[12])


def _summary(row: tuple[Any, ...]) -> RunListing:
    rid, uuid, name, description, status, started, ended, plan_name, plan_sha256, notes, tags, steps = row
    return RunListing(
        rid,
        uuid,
        name,
        description,
        status,
        started,
        ended,
        plan_name,
        plan_sha256,
        notes,
        json.loads(tags),
        steps,
    )

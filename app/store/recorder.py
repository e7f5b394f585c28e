"""The write side, used by the runner while a run happens. Every call is one committed transaction, so
a crash loses at most the call in progress (for samples: the current interval).

Order of calls::

    rec = Recorder(open_store())
    run_id = rec.begin_run(plan_json, plan_name=..., name=...)
    rec.add_managers(run_id, [...]); rec.add_workers(run_id, [...]); rec.add_targets(run_id, [...])
    for each step:
        step_id = rec.begin_step(run_id, index, spec_name=..., ...)
        rec.set_step_output(step_id, manager, job_text=...)        # per manager, before fio starts
        rec.add_samples(step_id, samples)                          # once per interval (a running step's
                                                                   # ended: when its last samples came)
        rec.set_step_output(step_id, manager, raw_output=...)      # per manager, when fio is done
        rec.add_step_results(step_id, results)
        rec.end_step(step_id, "complete")
    rec.end_run(run_id, "complete")
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from app import __version__
from app.model.metrics import Metrics
from app.process_owner import current_owner

from .blocks import BLOCK_SAMPLES, copy_samples, flush, seal_step
from .codec import encode_hist, metric_values, pack_text
from .compact import parent_of
from .database import Store
from .errors import RunNotFound
from .hist_blocks import copy_hists
from .records import ManagerInfo, ResultRow, SampleRow, TargetInfo, WorkerInfo
from .schema import LEVELS, MESSAGE_LEVELS, METRIC_COLUMNS, RUN_STATUSES, SAMPLE_VALUE_COLUMNS, STEP_STATUSES
from .timestamps import iso, utc_now

_M = [name for name, _ in METRIC_COLUMNS]
_SAMPLE_SQL = (
    f"INSERT OR REPLACE INTO samples (series_id, t, {', '.join(SAMPLE_VALUE_COLUMNS)}, i_p99_ns) "
    f"VALUES ({', '.join('?' * (3 + len(SAMPLE_VALUE_COLUMNS)))})"
)

_HIST_SQL = "INSERT OR REPLACE INTO sample_hists (series_id, t, read_hist, write_hist) VALUES (?, ?, ?, ?)"
# Levels whose samples keep the interval's latency histograms. One job's pair costs ~10x its scalar
# columns (see benchmarks/bench_store.py), so by default only the few roll-up rows a chart of
# percentiles over time needs keep them.
DEFAULT_SAMPLE_HIST_LEVELS: tuple[str, ...] = ("manager", "all")
_RESULT_SQL = (
    f"INSERT OR REPLACE INTO results (series_id, {', '.join(_M)}, read_hist, write_hist) "
    f"VALUES ({', '.join('?' * (3 + len(_M)))})"
)

SeriesKey = tuple[int, str, str | None, str]  # step id, level, manager, key


def host_facts() -> dict[str, Any]:
    """What a report needs to say about the machine running Fiometer."""
    return {
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "system": platform.system(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "fiometer": __version__,
    }


def plan_text_and_hash(plan: str | Mapping[str, Any]) -> tuple[str, str]:
    """The plan document as stored and its sha256. A mapping is serialised canonically (sorted keys)."""
    text = plan if isinstance(plan, str) else json.dumps(plan, sort_keys=True, ensure_ascii=False)
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def no_second(m: Metrics) -> bool:
    """An interval with no time and no I/O: a report repeated (its numbers are the previous second's)."""
    return m.seconds <= 0 and m.ios == 0 and not m.errors


class Recorder:
    """Writes runs as they happen, through one Store (so from the thread that opened it)."""

    def __init__(
        self, store: Store, *, sample_hist_levels: Iterable[str] = DEFAULT_SAMPLE_HIST_LEVELS
    ) -> None:
        self.store = store
        self.sample_hist_levels = frozenset(sample_hist_levels)
        self._series: dict[SeriesKey, int] = {}
        self._shared: set[int] = set()  # series whose samples are their parent's (series.same_as)
        self._target_worker: dict[int, dict[tuple[str | None, str], str]] = {}  # step id -> target's worker
        self._rows_written: dict[int, int] = {}  # series id -> rows written to it (when to make a block)

    # --- runs -------------------------------------------------------------------------------
    def begin_run(
        self,
        plan: str | Mapping[str, Any],
        *,
        plan_name: str = "",
        name: str = "",
        description: str = "",
        tags: Iterable[str] = (),
        notes: str = "",
        host: Mapping[str, Any] | None = None,
        started: datetime | None = None,
    ) -> int:
        """Record a run as ``running``, owned by this process; returns its id."""
        text, digest = plan_text_and_hash(plan)
        owner = current_owner()
        with self.store.write("starting a run") as conn:
            run_id = conn.execute(
                "INSERT INTO runs (uuid, name, description, status, started, plan_name, plan_json, "
                "plan_sha256, notes, host_json, owner_pid, owner_host, owner_token) "
                "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(uuid.uuid4()),
                    name,
                    description,
                    iso(started) if started else utc_now(),
                    plan_name,
                    text,
                    digest,
                    notes,
                    json.dumps(dict(host) if host is not None else host_facts()),
                    owner.pid,
                    owner.host,
                    owner.token,
                ),
            ).lastrowid
            conn.executemany(
                "INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?, ?)",
                [(run_id, t) for t in dict.fromkeys(tags) if t],
            )
        assert run_id is not None
        return run_id

    def add_managers(self, run_id: int, managers: Iterable[ManagerInfo]) -> None:
        with self.store.write("saving the run's managers") as conn:
            first = _next_position(conn, "managers", run_id)
            conn.executemany(
                "INSERT INTO managers (run_id, position, name, address, os, fio_version, protocol) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (run_id, first + i, m.name, m.address, m.os, m.fio_version, m.protocol)
                    for i, m in enumerate(managers)
                ],
            )

    def add_workers(self, run_id: int, workers: Iterable[WorkerInfo]) -> None:
        """Workers of managers already added (add_managers first)."""
        with self.store.write("saving the run's workers") as conn:
            first = _next_position(conn, "workers", run_id)
            conn.executemany(
                "INSERT INTO workers (run_id, position, manager, key, name, details_json) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (run_id, first + i, w.manager, w.key, w.name, json.dumps(w.details))
                    for i, w in enumerate(workers)
                ],
            )

    def add_targets(self, run_id: int, targets: Iterable[TargetInfo]) -> None:
        """Targets of workers already added (add_workers first)."""
        with self.store.write("saving the run's targets") as conn:
            first = _next_position(conn, "targets", run_id)
            conn.executemany(
                "INSERT INTO targets (run_id, position, manager, worker, key, name, path, details_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (run_id, first + i, t.manager, t.worker, t.key, t.name, t.path, json.dumps(t.details))
                    for i, t in enumerate(targets)
                ],
            )

    def add_message(
        self,
        run_id: int,
        text: str,
        *,
        level: str = "info",
        manager: str | None = None,
        step_id: int | None = None,
    ) -> None:
        """Keep something fio or the runner said (transport Message, a failure reason ...)."""
        if level not in MESSAGE_LEVELS:
            raise ValueError(f"message level {level!r} is not one of {MESSAGE_LEVELS}")
        with self.store.write("saving a message") as conn:
            _insert_message(conn, run_id, step_id, level, manager, text)

    def end_run(self, run_id: int, status: str, *, ended: datetime | None = None) -> None:
        """Finish the run; steps still running take the same status."""
        if status not in RUN_STATUSES or status == "running":
            raise ValueError(f"a run ends as one of {RUN_STATUSES[1:]}, not {status!r}")
        when = iso(ended) if ended else utc_now()
        with self.store.write("finishing the run") as conn:
            if not conn.execute(
                "UPDATE runs SET status = ?, ended = ? WHERE id = ?", (status, when, run_id)
            ).rowcount:
                raise RunNotFound(
                    f"There is no run {run_id} in {self.store.path} to finish; it may have been deleted."
                )
            for (step_id,) in conn.execute(
                "UPDATE steps SET status = ?, ended = ? WHERE run_id = ? AND status = 'running' RETURNING id",
                (status, when, run_id),
            ).fetchall():
                seal_step(conn, step_id)
        self._series.clear()  # a cache only: a later write for this run looks ids up again

    # --- steps ------------------------------------------------------------------------------
    def begin_step(
        self,
        run_id: int,
        index: int,
        *,
        spec_name: str = "",
        spec_text: str = "",
        queue_depth: int | None = None,
        active_workers: Sequence[Any] = (),
        active_targets: Sequence[Any] = (),
        ramp_s: float = 0.0,
        run_s: float = 0.0,
        started: datetime | None = None,
    ) -> int:
        with self.store.write("starting a step") as conn:
            step_id = conn.execute(
                "INSERT INTO steps (run_id, idx, spec_name, spec_text, queue_depth, active_workers_json, "
                "active_targets_json, ramp_s, run_s, started, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')",
                (
                    run_id,
                    index,
                    spec_name,
                    spec_text,
                    queue_depth,
                    json.dumps(list(active_workers)),
                    json.dumps(list(active_targets)),
                    ramp_s,
                    run_s,
                    iso(started) if started else utc_now(),
                ),
            ).lastrowid
        assert step_id is not None
        return step_id

    def set_step_output(
        self, step_id: int, manager: str, job_text: str | None = None, raw_output: str | None = None
    ) -> None:
        """Keep the fio job file and/or fio's raw final output for one manager; None leaves a part as is."""
        with self.store.write("saving fio's job file and output") as conn:
            conn.execute(
                "INSERT INTO step_outputs (step_id, manager, job_text, raw_output) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (step_id, manager) DO UPDATE SET "
                "job_text = coalesce(excluded.job_text, job_text), "
                "raw_output = coalesce(excluded.raw_output, raw_output)",
                (step_id, manager, job_text, pack_text(raw_output)),
            )

    def add_samples(self, step_id: int, samples: Iterable[SampleRow | tuple[Any, ...]]) -> None:
        """One interval's samples (all levels), committed together. A sample is a SampleRow or a tuple
        (manager, level, key, t, interval, whole). A repeated (level, manager, key, t) replaces the first.
        The interval window's histograms (and their p99) are kept for ``sample_hist_levels``; the whole
        window's are not (the step's results keep the final ones).

        A target whose worker has no other target, and ALL when there is one manager, give the same
        numbers as that worker or manager (at the same t): such a series, new together with its parent, shares the
        parent's samples (``series.same_as``) for as long as they stay equal; the first sample that
        differs gives it its own copy of the samples so far.

        An empty interval (no time, no I/O) is not a second and is not stored: fio's last report repeated as
        the final one comes at that report's t, and would replace the second it repeats."""
        rows = [s if isinstance(s, SampleRow) else SampleRow(*s) for s in samples]
        # (an unknown level is kept here and refused below)
        rows = [r for r in rows if r.level not in LEVELS or not no_second(r.interval)]
        keep = self.sample_hist_levels
        shared = set(self._shared)
        with self.store.write("saving samples") as conn:
            new: dict[SeriesKey, int] = {}
            created: set[int] = set()
            # keyed by time too: one batch may hold several seconds of a level (ALL slots emitted together
            # after an overdue tick or a late report), and each second keeps its own numbers
            values = {(r.level, r.manager, r.key, r.t): self._values(r, r.level in keep) for r in rows}
            parents = self._parents(conn, step_id, rows)
            out, hists = [], []
            held: dict[int, list[tuple[tuple[Any, ...], tuple[Any, ...] | None]]] = {}  # shared, this batch
            for r in rows:
                me = (r.level, r.manager, r.key)
                v = values[(*me, r.t)]
                sid = self._series_id(conn, step_id, r.level, r.manager, r.key, new, created, shared)
                parent = parents.get(me)
                # the same numbers at the same time (ALL's clock may give it another t than its manager's)
                same = parent is not None and values.get((*parent, r.t)) == v
                row = (sid, r.t, *v[:-3], v[-1])
                hist = (sid, r.t, v[-3], v[-2]) if v[-3] is not None or v[-2] is not None else None
                if sid in created and same and parent is not None:
                    p_level, p_manager, p_key = parent
                    psid = self._series_id(conn, step_id, p_level, p_manager, p_key, new, created, shared)
                    if psid in created:
                        conn.execute("UPDATE series SET same_as = ? WHERE id = ?", (psid, sid))
                        shared.add(sid)
                        held.setdefault(sid, []).append((row, hist))
                        continue
                if sid in shared:
                    if same:
                        held.setdefault(sid, []).append((row, hist))
                        continue
                    _unshare(conn, sid)
                    # and the seconds it shared earlier in this batch (several reports handed on at once):
                    # the copy holds only what was committed before
                    for earlier, its_hist in held.pop(sid, []):
                        out.append(earlier)
                        if its_hist is not None:
                            hists.append(its_hist)
                    shared.discard(sid)
                out.append(row)
                if hist is not None:
                    hists.append(hist)
            conn.executemany(_SAMPLE_SQL, out)
            conn.executemany(_HIST_SQL, hists)
            # the last moment known to be recorded, for a run whose process dies (samples' t counts from the
            # step's first report, seconds after the step's start: started + t falls short of it)
            conn.execute(
                "UPDATE steps SET ended = ? WHERE id = ? AND status = 'running'", (utc_now(), step_id)
            )
            flush(conn, self._due(sid for sid, *_ in out))
        self._series.update(new)  # only once committed: a rolled-back id must not be reused
        self._shared = shared

    def _due(self, written: Iterable[int]) -> list[int]:
        """Series whose rows make a block now: every BLOCK_SAMPLES rows of a series, the series' phase set
        by its id so that a step's series do not all make their blocks in the same interval."""
        due, counts = [], self._rows_written
        for sid in written:
            n = counts[sid] = counts.get(sid, 0) + 1
            if (n + sid) % BLOCK_SAMPLES == 0:
                due.append(sid)
        return due

    @staticmethod
    def _values(r: SampleRow, hists: bool) -> tuple[Any, ...]:
        iv = r.interval
        if not hists or not (iv.read_hist or iv.write_hist):
            return (*metric_values(iv), *metric_values(r.whole), None, None, None)
        return (
            *metric_values(iv),
            *metric_values(r.whole),
            encode_hist(iv.read_hist),
            encode_hist(iv.write_hist),
            iv.percentile_ns(99),
        )

    def _parents(
        self, conn: sqlite3.Connection, step_id: int, rows: list[SampleRow]
    ) -> dict[tuple[str, str | None, str], tuple[str, str | None, str]]:
        tw = self._target_worker.get(step_id)
        if tw is None:
            tw = self._target_worker[step_id] = {
                (m, k): w
                for m, k, w in conn.execute(
                    "SELECT targets.manager, targets.key, worker FROM targets JOIN steps ON steps.run_id = "
                    "targets.run_id WHERE steps.id = ?",
                    (step_id,),
                )
            }
        batch: dict[tuple[Any, ...], list[str]] = {}
        for r in rows:  # (a batch may hold several seconds of a series: each key once)
            if r.level == "manager":
                keys = batch.setdefault(("manager",), [])
            elif r.level == "target" and (r.manager, r.key) in tw:
                keys = batch.setdefault(("target", r.manager, tw[(r.manager, r.key)]), [])
            else:
                continue
            if r.key not in keys:
                keys.append(r.key)
        out = {}
        for r in rows:
            if r.level in ("target", "all"):
                parent = parent_of(r.level, r.manager, r.key, batch, tw)
                if parent is not None:
                    out[(r.level, r.manager, r.key)] = parent
        return out

    def add_step_results(self, step_id: int, results: Iterable[ResultRow | tuple[Any, ...]]) -> None:
        """Final numbers per level (target/worker/manager/ALL), histograms included. A ResultRow or a tuple
        (manager, level, key, metrics); writing a level again replaces it."""
        rows = [r if isinstance(r, ResultRow) else ResultRow(*r) for r in results]
        with self.store.write("saving step results") as conn:
            new: dict[SeriesKey, int] = {}
            conn.executemany(
                _RESULT_SQL,
                [
                    (
                        self._series_id(conn, step_id, r.level, r.manager, r.key, new),
                        *metric_values(r.metrics),
                        encode_hist(r.metrics.read_hist),
                        encode_hist(r.metrics.write_hist),
                    )
                    for r in rows
                ],
            )
        self._series.update(new)

    def end_step(
        self,
        step_id: int,
        status: str = "complete",
        *,
        error: str | None = None,
        ended: datetime | None = None,
    ) -> None:
        """Finish a step; ``error`` (plain words) is kept as an error message of the step."""
        if status not in STEP_STATUSES or status == "running":
            raise ValueError(f"a step ends as one of {STEP_STATUSES[1:]}, not {status!r}")
        with self.store.write("finishing a step") as conn:
            row = conn.execute(
                "UPDATE steps SET status = ?, ended = ? WHERE id = ? RETURNING run_id",
                (status, iso(ended) if ended else utc_now(), step_id),
            ).fetchone()
            if row is None:
                raise RunNotFound(
                    f"There is no step {step_id} in {self.store.path}; its run may have been deleted."
                )
            if error:
                _insert_message(conn, row[0], step_id, "error", None, error)
            seal_step(conn, step_id)
        ended_series = {v for k, v in self._series.items() if k[0] == step_id}
        self._rows_written = {k: v for k, v in self._rows_written.items() if k not in ended_series}
        self._series = {k: v for k, v in self._series.items() if k[0] != step_id}
        self._target_worker.pop(step_id, None)

    # --- helpers ----------------------------------------------------------------------------
    def _series_id(
        self,
        conn: sqlite3.Connection,
        step_id: int,
        level: str,
        manager: str | None,
        key: str,
        new: dict[SeriesKey, int],
        created: set[int] | None = None,
        shared: set[int] | None = None,
    ) -> int:
        """The series' id, made if need be (its id then goes into ``created``); a series found sharing
        another's samples goes into ``shared``."""
        k: SeriesKey = (step_id, level, manager, key)
        found = self._series.get(k) or new.get(k)
        if found is not None:
            return found
        if level not in LEVELS:
            raise ValueError(f"sample level {level!r} is not one of {LEVELS}")
        row = conn.execute(
            "SELECT id, same_as FROM series WHERE step_id = ? AND level = ? AND ifnull(manager, '') = ? "
            "AND key = ?",
            (step_id, level, manager or "", key),
        ).fetchone()
        if row is None:
            row = conn.execute(
                "INSERT INTO series (step_id, level, manager, key) VALUES (?, ?, ?, ?) RETURNING id, same_as",
                (step_id, level, manager, key),
            ).fetchone()
            if created is not None:
                created.add(row[0])
        elif row[1] is not None and shared is not None:
            shared.add(row[0])
        sid: int = row[0]
        new[k] = sid
        return sid


def _unshare(conn: sqlite3.Connection, sid: int) -> None:
    """A series stops sharing its parent's samples: it gets its own copy of the samples so far."""
    parent = "(SELECT same_as FROM series WHERE id = ?)"
    source = conn.execute(f"SELECT {parent}", (sid,)).fetchone()[0]
    copy_samples(conn, source, sid)
    copy_hists(conn, source, sid)
    conn.execute("UPDATE series SET same_as = NULL WHERE id = ?", (sid,))


def _next_position(conn: sqlite3.Connection, table: str, run_id: int) -> int:
    position: int = conn.execute(
        f"SELECT ifnull(max(position) + 1, 0) FROM {table} WHERE run_id = ?", (run_id,)
    ).fetchone()[0]
    return position


def _insert_message(
    conn: sqlite3.Connection, run_id: int, step_id: int | None, level: str, manager: str | None, text: str
) -> None:
    conn.execute(
        "INSERT INTO messages (run_id, step_id, at, level, manager, text) VALUES (?, ?, ?, ?, ?, ?)",
        (run_id, step_id, utc_now(), level, manager, text),
    )

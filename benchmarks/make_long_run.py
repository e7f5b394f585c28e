"""Write a synthetic but realistic long run into a results database, through the real recorder.

    python benchmarks/make_long_run.py --db PATH --minutes M --workers W [--managers K]
                                       [--step-minutes S] [--targets T]

Each manager runs W / K workers with T targets each (default 1, the usual Iometer layout); every second
each level (target, worker, manager, ALL) gets a sample with both windows and realistic latency
histograms (lognormal latencies in fio's json+ buckets), as telemetry hands them to the store; each
step ends with its results (histograms included) and a raw fio output per manager. The run is split
into steps of ``--step-minutes``. Prints the run id. ``--repeat N`` then adds a run made of that run's
steps N times over, its stored rows copied (``repeat_run``: an 8-hour run from a 1-hour one in seconds);
``--from-run ID --repeat N`` adds only that, from a run already stored (an 18-hour run beside the 8-hour one).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import Workload  # noqa: E402

from app.analysis.validity import record_notes  # noqa: E402
from app.live.data import over_time  # noqa: E402
from app.model import planfile  # noqa: E402
from app.model.metrics import Metrics  # noqa: E402
from app.model.plan import AccessSpec, Manager, Plan, SpecLine, Target, Worker  # noqa: E402
from app.store import (  # noqa: E402
    ManagerInfo,
    Recorder,
    ResultRow,
    SampleRow,
    TargetInfo,
    WorkerInfo,
    open_store,
)


def jobs_of(managers: int, workers: int, targets: int) -> list[tuple[str, str, str]]:
    """(manager, worker key, target key) per job, keys as the runner names them."""
    per = max(1, workers // managers)
    return [
        (f"M{m + 1}", f"w{w + 1}", f"w{w + 1}t{t + 1}")
        for m in range(managers)
        for w in range(per)
        for t in range(targets)
    ]


SPECS = {  # the steps' specs, in turn
    "4K; 100% Read; 0% random": SpecLine(4096, 100, 100, 0),
    "4K; 65% Read; 60% random": SpecLine(4096, 100, 65, 60),
    "64K; 0% Read; 0% random": SpecLine(65536, 100, 0, 0),
}


def plan_of(jobs: list[tuple[str, str, str]], step_s: int) -> Plan:
    """The plan such a run would have run: its managers, workers, targets and the three specs in turn, so
    that compare and report read it as they read a real run's."""
    plan = Plan(name="long run", specs=[AccessSpec(n, [line]) for n, line in SPECS.items()])
    plan.setup.run_time = step_s
    for m in dict.fromkeys(m for m, _, _ in jobs):
        manager = Manager(m)
        for w in dict.fromkeys(w for mm, w, _ in jobs if mm == m):
            targets = [Target(f"Target {t}") for mm, ww, t in jobs if (mm, ww) == (m, w)]
            manager.workers.append(
                Worker(f"Worker {w[1:]}", queue_depth=16, specs=list(SPECS), targets=targets)
            )
        plan.managers.append(manager)
    return plan


def whole_of(parts: list[Metrics]) -> Metrics:
    """The step so far, as fio's cumulative numbers: no histograms (the store keeps only the final ones)."""
    m = over_time(parts)
    m.read_hist, m.write_hist = {}, {}
    return m


class Telemetry:
    """Rolls target samples up to workers, managers and ALL, the way telemetry does."""

    def __init__(self, jobs: list[tuple[str, str, str]], load: Workload) -> None:
        self.jobs, self.load = jobs, load
        self.whole: dict[tuple[str, str | None, str], Metrics] = {}

    def interval(self, t: float) -> tuple[list[SampleRow], dict[tuple[str, str | None, str], Metrics]]:
        rows: list[SampleRow] = []
        inter: dict[tuple[str, str | None, str], Metrics] = {}
        by_worker: dict[tuple[str, str], list[Metrics]] = {}
        for manager, worker, target in self.jobs:
            m = self.load.job()
            inter[("target", manager, target)] = m
            by_worker.setdefault((manager, worker), []).append(m)
        by_manager: dict[str, list[Metrics]] = {}
        for (manager, worker), parts in by_worker.items():
            m = parts[0] if len(parts) == 1 else Metrics.combine(parts)
            inter[("worker", manager, worker)] = m
            by_manager.setdefault(manager, []).append(m)
        for manager, parts in by_manager.items():
            inter[("manager", manager, manager)] = Metrics.combine(parts)
        inter[("all", None, "ALL")] = Metrics.combine([inter[("manager", m, m)] for m in by_manager])
        for (level, manager, key), m in inter.items():
            prev = self.whole.get((level, manager, key))
            whole = m if prev is None else _accumulate(prev, m)
            whole = Metrics(**{**vars(whole), "seconds": t, "read_hist": {}, "write_hist": {}})
            self.whole[(level, manager, key)] = whole
            rows.append(SampleRow(manager, level, key, t, m, whole))
        return rows, inter


def _accumulate(prev: Metrics, m: Metrics) -> Metrics:
    out = over_time([prev, m])
    out.read_hist, out.write_hist = {}, {}
    return out


def write_run(
    db: Path,
    minutes: float,
    workers: int,
    managers: int = 1,
    targets: int = 1,
    step_minutes: float = 10.0,
    seed: int = 7,
) -> int:
    jobs = jobs_of(managers, workers, targets)
    load = Workload(seed=seed)
    seconds = int(round(minutes * 60))
    step_s = max(1, int(round(step_minutes * 60)))
    with open_store(db) as store:
        rec = Recorder(store)
        run_id = rec.begin_run(
            planfile.to_dict(plan_of(jobs, step_s)),
            plan_name="long run",
            name=f"long run {minutes:g} min x {workers} workers",
            tags=["synthetic"],
        )
        names = sorted({m for m, _, _ in jobs}, key=lambda s: int(s[1:]))
        rec.add_managers(run_id, [ManagerInfo(m, fio_version="fio-3.33") for m in names])
        rec.add_workers(
            run_id,
            [
                WorkerInfo(m, w, f"Worker {w[1:]}", {"queue_depth": 16})
                for m, w in dict.fromkeys((m, w) for m, w, _ in jobs)
            ],
        )
        rec.add_targets(
            run_id,
            [
                TargetInfo(m, w, t, f"Target {t}", f"/dev/sd{chr(97 + i % 26)}", {"direct": True})
                for i, (m, w, t) in enumerate(jobs)
            ],
        )
        done, index = 0, 0
        while done < seconds:
            length = min(step_s, seconds - done)
            step_id = rec.begin_step(
                run_id,
                index,
                spec_name=list(SPECS)[index % 3],
                queue_depth=16,
                active_workers=[[m, w] for m, w, _ in jobs],
                active_targets=[[m, t] for m, _, t in jobs],
                run_s=length,
            )
            for manager in names:
                rec.set_step_output(
                    step_id, manager, job_text=f"[global]\nioengine=libaio\nruntime={length}\n"
                )
            tel = Telemetry(jobs, load)
            finals: dict[tuple[str, str | None, str], list[Metrics]] = {}
            for s in range(1, length + 1):
                rows, inter = tel.interval(float(s))
                rec.add_samples(step_id, rows)
                for k, m in inter.items():
                    finals.setdefault(k, []).append(m)
            results = [ResultRow(k[1], k[0], k[2], over_time(parts)) for k, parts in finals.items()]
            rec.add_step_results(step_id, results)
            for manager in names:
                raw = json.dumps(
                    {
                        "fio version": "fio-3.33",
                        "jobs": [
                            {
                                "jobname": r.key,
                                "read": {
                                    "io_bytes": r.metrics.read_bytes,
                                    "clat_ns": {"bins": {str(b): c for b, c in r.metrics.read_hist.items()}},
                                },
                                "write": {
                                    "io_bytes": r.metrics.write_bytes,
                                    "clat_ns": {"bins": {str(b): c for b, c in r.metrics.write_hist.items()}},
                                },
                            }
                            for r in results
                            if r.level == "target" and r.manager == manager
                        ],
                    },
                    indent=2,
                )
                rec.set_step_output(step_id, manager, raw_output=raw)
            rec.end_step(step_id, "complete")
            done += length
            index += 1
        rec.end_run(run_id, "complete")
        record_notes(store, run_id)  # as the runner keeps them when a run ends (else History computes them)
    return run_id


def _cols(conn: sqlite3.Connection, table: str, skip: tuple[str, ...] = ()) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in skip]


def repeat_run(db: Path, run_id: int, times: int) -> int:
    """A new run made of ``run_id``'s steps ``times`` over (step index continued), every stored row of
    theirs copied as it is (samples' blocks, peaks, histograms, results, fio's outputs): an 8-hour run in
    seconds instead of the hour of CPU the recorder takes to write one. Returns the new run's id."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            run_cols = _cols(conn, "runs", ("id", "uuid"))
            new_run = conn.execute(
                f"INSERT INTO runs (uuid, {', '.join(run_cols)}) SELECT lower(hex(randomblob(16))), "
                f"{', '.join(run_cols)} FROM runs WHERE id = ? RETURNING id",
                (run_id,),
            ).fetchone()[0]
            conn.execute("UPDATE runs SET name = name || ? WHERE id = ?", (f" x {times}", new_run))
            for table in ("managers", "workers", "targets"):
                cols = _cols(conn, table, ("id", "run_id"))
                conn.execute(
                    f"INSERT INTO {table} (run_id, {', '.join(cols)}) SELECT ?, {', '.join(cols)} "
                    f"FROM {table} WHERE run_id = ?",
                    (new_run, run_id),
                )
            steps = conn.execute("SELECT id FROM steps WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()
            step_cols = _cols(conn, "steps", ("id", "run_id", "idx"))
            index = 0
            for _ in range(times):
                for (step,) in steps:
                    new_step = conn.execute(
                        f"INSERT INTO steps (run_id, idx, {', '.join(step_cols)}) SELECT ?, ?, "
                        f"{', '.join(step_cols)} FROM steps WHERE id = ? RETURNING id",
                        (new_run, index, step),
                    ).fetchone()[0]
                    index += 1
                    _copy_step(conn, step, new_step)
    finally:
        conn.close()
    return new_run


def _copy_step(conn: sqlite3.Connection, step: int, new_step: int) -> None:
    ids = {}
    for sid, level, manager, key in conn.execute(
        "SELECT id, level, manager, key FROM series WHERE step_id = ? ORDER BY id", (step,)
    ).fetchall():
        ids[sid] = conn.execute(
            "INSERT INTO series (step_id, level, manager, key) VALUES (?, ?, ?, ?) RETURNING id",
            (new_step, level, manager, key),
        ).fetchone()[0]
    for sid, same in conn.execute(
        "SELECT id, same_as FROM series WHERE step_id = ? AND same_as IS NOT NULL", (step,)
    ).fetchall():
        conn.execute("UPDATE series SET same_as = ? WHERE id = ?", (ids[same], ids[sid]))
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS series_map (old INTEGER PRIMARY KEY, new INTEGER)")
    conn.execute("DELETE FROM series_map")
    conn.executemany("INSERT INTO series_map VALUES (?, ?)", list(ids.items()))
    for table in (
        "sample_blocks",
        "sample_peaks",
        "sample_hists",
        "sample_hist_blocks",
        "sample_hist_summaries",
        "results",
        "samples",
    ):
        cols = _cols(conn, table, ("id", "series_id"))
        conn.execute(
            f"INSERT INTO {table} (series_id, {', '.join(cols)}) SELECT series_map.new, "
            f"{', '.join(cols)} FROM {table} JOIN series_map ON series_map.old = {table}.series_id"
        )
    cols = _cols(conn, "step_outputs", ("step_id",))
    conn.execute(
        f"INSERT INTO step_outputs (step_id, {', '.join(cols)}) SELECT ?, {', '.join(cols)} "
        "FROM step_outputs WHERE step_id = ?",
        (new_step, step),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the results database to add the run to")
    ap.add_argument("--minutes", type=float)
    ap.add_argument("--workers", type=int, help="workers in all (spread over the managers)")
    ap.add_argument("--managers", type=int, default=1)
    ap.add_argument("--targets", type=int, default=1, help="targets per worker")
    ap.add_argument("--step-minutes", type=float, default=10.0)
    ap.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help="then add a run made of the new run's steps N times over (copied rows): prints its id",
    )
    ap.add_argument(
        "--from-run",
        type=int,
        metavar="ID",
        help="with --repeat: repeat this stored run instead of writing a new one (--minutes and --workers unused)",
    )
    args = ap.parse_args()
    t0 = time.process_time()
    if args.from_run is not None and args.repeat:
        print(repeat_run(Path(args.db), args.from_run, args.repeat))
        return 0
    if args.minutes is None or args.workers is None:
        ap.error("--minutes and --workers are needed to write a run (or --from-run ID --repeat N)")
    run_id = write_run(
        Path(args.db), args.minutes, args.workers, args.managers, args.targets, args.step_minutes
    )
    print(run_id)
    if args.repeat:
        print(repeat_run(Path(args.db), run_id, args.repeat))
    print(f"written in {time.process_time() - t0:.1f} s CPU", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

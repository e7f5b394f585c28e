"""A run's workload results as report tables: sweep maxima, preconditioning, timed transfers and disk
statistics — what `fiometer show` prints, in the report's table form (Qt-free)."""

from __future__ import annotations

from collections.abc import Sequence

from app.analysis.disk_stats import run_disk_stats
from app.analysis.preconditioning import fill_summary, precondition_of, steady_state_of
from app.analysis.sweep import find_sweeps
from app.analysis.timed_transfer import transfers
from app.model.units import format_bytes, format_elapsed
from app.report.sweep_charts import knee_note
from app.report.tables import Cell, Column, Row, Table, metric, num
from app.store.database import Store
from app.store.queries import with_raw_outputs
from app.store.records import Run


def _text(s: str) -> Cell:
    return Cell(s, s)


def sweep_table(run: Run) -> Table | None:
    sweeps = find_sweeps(run)
    if not sweeps:
        return None
    rows = []
    for sw in sweeps:
        knee = sw.knee
        for p in sw.points:
            marks = [
                m
                for m, hit in (
                    ("max IOPS", p is sw.max_iops),
                    ("max MB/s", p is sw.max_mbps),
                    ("knee", p is knee),
                )
                if hit
            ]
            rows.append(
                Row(
                    [
                        _text(p.at(sw.dimension)),
                        num(p.step + 1, 0),
                        metric(p.iops),
                        metric(p.mbps),
                        metric(p.lat_mean_ms),
                        metric(p.lat_p99_ms),
                        _text(", ".join(marks)),
                    ],
                    group=f"{sw.label} (over {sw.dimension.replace('_', ' ')})",
                )
            )
    notes = [s for sw in sweeps for s in sw.summary()] + [knee_note()]
    return Table(
        f"sweep-{run.id}",
        f"Run {run.id} \u2014 sweep summary",
        [
            Column("Load"),
            Column("Step", True),
            Column("IOPS", True),
            Column("MB/s", True),
            Column("Avg ms", True),
            Column("p99 ms", True),
            Column("Point"),
        ],
        rows,
        notes,
        group_title="Sweep",
    )


def preconditioning_table(store: Store, run: Run) -> Table | None:
    pc = precondition_of(run)
    if not pc.enabled:
        return None
    from app.analysis.compare import all_metrics
    from app.analysis.preconditioning import phases
    from app.report.tables import PHASE_WORDS, fmt_sig

    rows = []
    phase = phases(run)
    for s in run.steps:  # the steps themselves, named by their phase (never like the measured step)
        if phase.get(s.index, "measure") == "measure":
            continue
        m = all_metrics(s)
        got = (
            f"{fmt_sig(m.iops)} IOPS, {fmt_sig(m.mbps)} MB/s over {m.seconds:g} s ({s.status})"
            if m is not None
            else f"no results ({s.status})"
        )
        rows.append(
            Row([_text(f"Step {s.index + 1}: {PHASE_WORDS[phase[s.index]]}"), _text(f"{s.spec_name}: {got}")])
        )
    fill = fill_summary(run)
    if fill:
        rows.append(Row([_text("Fill"), _text(fill.removeprefix("Fill: "))]))
    verdict = steady_state_of(store, run)
    if verdict is not None:
        rows.append(Row([_text("Steady state"), _text(verdict.sentence(pc))]))
        rows.append(
            Row([_text("IOPS per round"), _text(", ".join(f"{r:,.0f}" for r in verdict.rounds) or "\u2013")])
        )
    return Table(
        f"precondition-{run.id}",
        f"Run {run.id} \u2014 preconditioning (not part of the results)",
        [Column("Phase"), Column("Result")],
        rows,
    )


def transfer_table(run: Run) -> Table | None:
    moved = transfers(run)
    if not moved:
        return None
    rows = [
        Row(
            [
                num(t.step + 1, 0),
                _text(t.spec),
                _text(format_bytes(t.bytes)),
                Cell(
                    format_elapsed(t.seconds), t.seconds / 86400, None, "[h]:mm:ss.00"
                ),  # a spreadsheet time
                metric(t.bytes / t.seconds / 1e6 if t.seconds else None),
            ]
        )
        for t in moved
    ]
    return Table(
        f"transfer-{run.id}",
        f"Run {run.id} \u2014 timed transfer",
        [
            Column("Step", True),
            Column("Access specification"),
            Column("Moved"),
            Column("Elapsed", True),
            Column("MB/s", True),
        ],
        rows,
    )


def disk_table(run: Run) -> Table | None:
    disks = run_disk_stats(run)
    if not disks:
        return None
    rows = [
        Row(
            [
                _text(str(d.step + 1)),  # a row key, as the text columns after it (the PDF splits on them)
                _text(d.manager),
                _text(d.disk),
                _text(target_names(d.targets)),
                num(d.reads, 0),
                num(d.writes, 0),
                metric(d.r_s),
                metric(d.w_s),
                metric(d.rkb_s),
                metric(d.wkb_s),
                metric(d.rareq_kib),
                metric(d.wareq_kib),
                metric(d.r_await_ms),
                metric(d.w_await_ms),
                metric(d.aqu_sz),
                metric(d.util_pct),
            ]
        )
        for d in disks
    ]
    return Table(
        f"disks-{run.id}",
        f"Run {run.id} \u2014 disk statistics",
        [
            Column("Step"),
            Column("Manager"),
            Column("Disk"),
            Column("Targets"),
            Column("Reads", True),
            Column("Writes", True),
            Column("r/s", True),
            Column("w/s", True),
            Column("rkB/s", True),
            Column("wkB/s", True),
            Column("rareq-sz KiB", True),
            Column("wareq-sz KiB", True),
            Column("r_await ms", True),
            Column("w_await ms", True),
            Column("aqu-sz", True),
            Column("%util", True),
        ],
        rows,
        [
            "From the disk's own counters, as iostat computes them: r/s to wareq-sz over one and the same "
            "window (fio's sectors from fio 3.36, else the kernel's over the whole step for a local fio, or "
            "between fio's first and last report; empty where none was recorded), await = ticks per I/O, aqu-sz = time in queue over "
            "the step, %util = fio's busy time."
        ],
    )


def target_names(names: Sequence[str]) -> str:
    """ "T1, T2"; a name the step's jobs share said once with their count: "TESTFILE (4 jobs)" (workers on
    one device), not "TESTFILE, TESTFILE, TESTFILE, TESTFILE"."""
    counts = {n: names.count(n) for n in names}
    return ", ".join(f"{n} ({c} jobs)" if c > 1 else n for n, c in counts.items()) or "\u2013"


def workload_tables(store: Store, run: Run) -> list[Table]:
    """Whichever of the four the run has, in that order."""
    with_output = with_raw_outputs(store, run) if run.steps else run  # disk counters: fio's output
    from app.report.validity_report import curve_table

    return [
        t
        for t in (
            curve_table(run),
            sweep_table(run),
            preconditioning_table(store, run),
            transfer_table(run),
            disk_table(with_output),
        )
        if t is not None
    ]

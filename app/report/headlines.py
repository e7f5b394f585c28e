"""Each workflow's headline figures, before vs after (Qt-free): a sweep's maxima and knee (with both sweeps
on one chart), a timed transfer's elapsed time, preconditioning (fill, steady state) and the disk
statistics beside the results. Sentences for the summary, a table for the full report.

Only what the runs hold is shown: a comparison of two plain runs has no headline rows at all."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.analysis.compare import Comparison, MatchedStep, all_metrics
from app.analysis.disk_stats import DiskStat, step_disk_stats
from app.analysis.preconditioning import fill_summary, precondition_of, steady_state_of
from app.analysis.sweep import Sweep, SweepPoint, find_sweeps
from app.analysis.timed_transfer import transfers
from app.model.units import format_bytes
from app.report.charts import LineChart, LineSeries, run_color
from app.report.sweep_charts import compared_charts
from app.report.tables import MINUS, Cell, Column, Row, Table, fmt_sig, metric, pct_cell
from app.report.timeline import io_start
from app.report.transfer_table import block_and_direction, elapsed_text, transfer_table
from app.store.database import Store
from app.store.queries import step_samples, with_raw_outputs
from app.store.records import Run

ARROW = "\u2192"


@dataclass
class Headlines:
    sentences: list[str] = field(default_factory=list)  # for the summary
    table: Table | None = None  # workload | figure | before | after | change
    charts: list[LineChart] = field(default_factory=list)  # the two sides' sweeps overlaid
    # run id -> its sweeps drawn above, both sides overlaid (their steps need no charts of their own)
    swept: dict[int, list[Sweep]] = field(default_factory=dict)
    disks: Table | None = None  # disk statistics beside IOPS and MB/s, per paired step and side
    transfers: Table | None = None  # timed transfers: bytes, elapsed and MB/s of both sides per block size
    layout: list[str] = field(default_factory=list)  # test-file layout before a step's first I/O (disclosure)


def _pct(a: float | None, b: float | None) -> float | None:
    return (b - a) / a * 100 if a and b is not None else None


def _pct_text(p: float | None) -> str:
    sign = "+" if p is not None and p >= 0 else MINUS
    return "" if p is None else f" ({sign}{abs(p):,.1f} %)"


def _mark(p: float | None, threshold: float, higher_is_better: bool) -> str | None:
    if p is None or abs(p) <= threshold:
        return None
    return "better" if (p > 0) == higher_is_better else "worse"


def _measured(rounds: list[float]) -> list[float]:
    """The rounds up to the last one with I/O (a round begun as the step ended has none)."""
    out = list(rounds)
    while out and not out[-1]:
        out.pop()
    return out


def _text(s: str) -> Cell:
    return Cell(s, s)


def _at_max(p: SweepPoint) -> str:
    """The response time at a sweep's maximum, as Orion states it beside MaxIOPS: " (average 2.1 ms, p99
    4.0 ms)"."""
    lat = f"average {fmt_sig(p.lat_mean_ms)} ms"
    return f" ({lat}, p99 {fmt_sig(p.lat_p99_ms)} ms)" if p.lat_p99_ms is not None else f" ({lat})"


def _latency_rows(pa: SweepPoint, pb: SweepPoint, group: str, threshold: float) -> list[Row]:
    """Average and p99 response time at each side's maximum (lower is better)."""
    rows = []
    for name, va, vb in (
        ("average ms at the maximum", pa.lat_mean_ms, pb.lat_mean_ms),
        ("p99 ms at the maximum", pa.lat_p99_ms, pb.lat_p99_ms),
    ):
        if va is None and vb is None:
            continue
        cells = [_text(name), metric(va), metric(vb)]
        p = _pct(va, vb)
        rows.append(Row([*cells, pct_cell(p, _mark(p, threshold, False))], group))
    return rows


def _pair_sweeps(a: list[Sweep], b: list[Sweep]) -> list[tuple[Sweep, Sweep]]:
    out, rest = [], list(b)
    for s in a:
        m = next((x for x in rest if x.label == s.label and x.dimension == s.dimension), None) or next(
            (x for x in rest if x.dimension == s.dimension), None
        )
        if m is not None:
            out.append((s, m))
            rest.remove(m)
    return out


LARGE_TRANSFER = 64 * 1024  # from here a sweep is judged by MB/s (Orion's "large" I/Os), below by IOPS


def sweep_work(s: Sweep) -> str:
    """ "mbps" for a transfer-size sweep or large transfers, else "iops"."""
    if s.throughput == "mbps":
        return "mbps"
    p = s.max_mbps
    return "mbps" if p.iops and p.mbps * 1e6 / p.iops >= LARGE_TRANSFER else "iops"


def _disk_row(label: str, r: MatchedStep, side_step: int, run: Run, d: DiskStat) -> Row:
    rs, ws, rkb, wkb, rsz, wsz = d.r_s, d.w_s, d.rkb_s, d.wkb_s, d.rareq_kib, d.wareq_kib
    m = all_metrics(next(s for s in run.steps if s.index == side_step))
    return Row(
        [
            _text(r.spec),
            _text(r.load),
            _text(label),
            _text(d.disk),
            metric(m.iops if m else None),
            metric(m.mbps if m else None),
            metric(rs),
            metric(ws),
            metric(rkb),
            metric(wkb),
            metric(rsz),
            metric(wsz),
            metric(d.r_await_ms),
            metric(d.w_await_ms),
            metric(d.aqu_sz),
            metric(d.util_pct),
        ]
    )


def disk_table(c: Comparison, number: int, labels: tuple[str, str], runs: tuple[Run, Run]) -> Table | None:
    rows = []
    steps = [{s.index: s for s in r.steps} for r in runs]
    for r in c.rows:
        for side, (sv, run) in enumerate(((r.baseline, runs[0]), (r.candidate, runs[1]))):
            step = steps[side].get(sv.index)
            if step is None:
                continue
            for d in step_disk_stats(run, step):
                rows.append(_disk_row(labels[side], r, sv.index, run, d))
    if not rows:
        return None
    cols = [
        Column("Access specification"),
        Column("Load"),
        Column("Side"),
        Column("Disk"),
        Column("IOPS", True),
        Column("MB/s", True),
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
    ]
    return Table(
        f"disk-compare-{number}",
        f"Disk statistics beside the results: {labels[0]} and {labels[1]}",
        cols,
        rows,
        [
            "r/s, w/s, rkB/s, wkB/s, rareq-sz/wareq-sz, await, aqu-sz and %util from the disk's own "
            "counters, as iostat computes them: the first five over one and the same window (fio's "
            "sectors from fio 3.36, else the kernel's over the whole step for a local fio, or between fio's "
            "first and last report; empty where none was recorded). A request size smaller than the transfer size means "
            "the kernel split the I/Os; IOPS and MB/s are fio's."
        ],
    )


def headlines(store: Store, c: Comparison, number: int, base_label: str, cand_label: str) -> Headlines:
    """Headlines of the first run of each side (a group's runs share their plan)."""
    out = Headlines()
    a = with_raw_outputs(store, c.baseline.runs[0])
    b = with_raw_outputs(store, c.candidate.runs[0])
    labels = (base_label, cand_label)
    rows: list[Row] = []
    for i, (sa, sb) in enumerate(_pair_sweeps(find_sweeps(a), find_sweeps(b)), 1):
        group = f"Sweep: {sa.label} (over {sa.dimension.replace('_', ' ')})"
        work = sweep_work(sa)
        unit = "MB/s" if work == "mbps" else "IOPS"
        pa, pb = (sa.max_mbps, sb.max_mbps) if work == "mbps" else (sa.max_iops, sb.max_iops)
        va, vb = getattr(pa, work), getattr(pb, work)
        fa, fb = f"{va:,.0f} @ {pa.at(sa.dimension)}", f"{vb:,.0f} @ {pb.at(sb.dimension)}"
        rows.append(
            Row(
                [
                    _text(f"maximum {unit}"),
                    _text(fa),
                    _text(fb),
                    pct_cell(_pct(va, vb), _mark(_pct(va, vb), c.threshold_pct, True)),
                ],
                group,
            )
        )
        rows += _latency_rows(pa, pb, group, c.threshold_pct)
        ka, kb = sa.knee, sb.knee
        kta = ka.at(sa.dimension) if ka else "none (still rising)"
        ktb = kb.at(sb.dimension) if kb else "none (still rising)"
        rows.append(Row([_text("knee"), _text(kta), _text(ktb), _text("")], group))
        out.sentences.append(
            f"{sa.label} sweep: maximum {unit} {fa}{_at_max(pa)} {ARROW} {fb}{_at_max(pb)}"
            f"{_pct_text(_pct(va, vb))}; knee {kta} {ARROW} {ktb}."
        )
        out.charts += compared_charts(f"sweep-compare-{number}-{i}", sa, sb, labels)
        out.swept.setdefault(a.id, []).append(sa)
        out.swept.setdefault(b.id, []).append(sb)
    ta, tb = ({t.step: t for t in transfers(a)}, {t.step: t for t in transfers(b)})
    sizes = {
        s.index: block_and_direction(s)[0] for s in a.steps if s.index in ta
    }  # "at 64 KiB" when they differ
    for r in c.rows:  # paired as the comparison paired the steps; the table is transfer_table
        x, y = ta.get(r.baseline.index), tb.get(r.candidate.index)
        if x is None or y is None:
            continue
        if r.incomplete and not c.include_incomplete:  # a stopped transfer moved less: not like with like
            out.sentences.append(
                f"{x.spec} transfer of {format_bytes(x.bytes)}: not compared, "
                + " and ".join(
                    i.replace("the baseline", labels[0]).replace("the candidate", labels[1])
                    for i in r.incomplete
                )
                + "."
            )
            continue
        p = _pct(x.seconds, y.seconds)
        size = sizes.get(x.step)
        at = f" at {format_bytes(size)}" if size and len(set(sizes.values())) > 1 else ""
        rate = (
            f"; {fmt_sig(x.bytes / x.seconds / 1e6)} {ARROW} {fmt_sig(y.bytes / y.seconds / 1e6)} MB/s"
            if x.seconds and y.seconds
            else ""
        )
        out.sentences.append(
            f"{x.spec} transfer of {format_bytes(x.bytes)}{at}: {elapsed_text(x.seconds)} {ARROW} "
            f"{elapsed_text(y.seconds)}{_pct_text(p)}{rate}."
        )
    out.transfers = transfer_table(c, number, labels, (a, b), lambda p: _mark(p, c.threshold_pct, False))
    if precondition_of(a).enabled or precondition_of(b).enabled:
        group = "Preconditioning (not part of the results)"
        fill_a, fill_b = fill_summary(a), fill_summary(b)
        if fill_a or fill_b:
            rows.append(
                Row(
                    [
                        _text("fill"),
                        _text((fill_a or "none").removeprefix("Fill: ")),
                        _text((fill_b or "none").removeprefix("Fill: ")),
                        _text(""),
                    ],
                    group,
                )
            )
        sa_, sb_ = steady_state_of(store, a), steady_state_of(store, b)
        if sa_ or sb_:

            def steady(s) -> str:
                if s is None:
                    return "not run"
                if s.window is None:
                    return f"not reached in {len(s.rounds)} rounds"
                return (
                    f"round {s.window.last + 1} ({s.at_s:g} s): {s.window.mean_iops:,.0f} IOPS, within "
                    f"{s.window.excursion_pct:.1f} %"
                )

            rows.append(
                Row(
                    [
                        _text("steady state"),
                        _text(steady(sa_)),
                        _text(steady(sb_)),
                        pct_cell(
                            _pct(
                                sa_.window.mean_iops if sa_ and sa_.window else None,
                                sb_.window.mean_iops if sb_ and sb_.window else None,
                            )
                        ),
                    ],
                    group,
                )
            )
            out.sentences.append(f"Preconditioning: steady state {steady(sa_)} {ARROW} {steady(sb_)}.")
            rounds = [(label, st) for label, st in zip(labels, (sa_, sb_), strict=True) if st and st.rounds]
            if rounds:
                out.charts.append(
                    LineChart(
                        f"steady-compare-{number}",
                        f"Steady-state rounds: IOPS per round, {labels[0]} and {labels[1]}",
                        "round",
                        "IOPS",
                        [
                            LineSeries(
                                label,
                                [(float(i), v) for i, v in enumerate(_measured(st.rounds), 1)],
                                run_color(labels.index(label)),
                                1.4,
                                markers=True,
                            )
                            for label, st in rounds
                        ],
                        x_min=1.0,
                    )
                )
    if rows:
        groups = {r.group.split(":")[0] for r in rows}
        notes = (
            [
                "Sweeps: the highest throughput and the load it came at; the knee as in the run's sweep "
                "summary."
            ]
            if "Sweep" in groups
            else []
        ) + (
            ["Preconditioning is summarised here and kept out of the results."]
            if any(g.startswith("Preconditioning") for g in groups)
            else []
        )
        out.table = Table(
            f"headlines-{number}",
            f"Headline figures: {base_label} and {cand_label}",
            [Column("Figure"), Column(base_label), Column(cand_label), Column("Change %", True)],
            rows,
            notes,
            group_title="Workload",
        )
    out.disks = disk_table(c, number, labels, (a, b))
    out.layout = layout_notes(store, ((a, base_label), (b, cand_label)))
    return out


def layout_notes(store: Store, runs) -> list[str]:
    """ "Run 1 (before), step 1: 3.6 s of test-file layout before the first I/O, not counted as measured
    time" for each step where fio laid out its files after the step started: only where there was a file
    to lay out (never on a raw device), and the step's ramp-up is not layout."""
    from app.analysis.validity import lays_out_files

    out = []
    for run, label in runs:
        for step in run.steps:
            if not lays_out_files(run, step):
                continue
            samples = step_samples(store, step.id, "all", "ALL", histograms=False)
            start = io_start(samples) - float(step.ramp_s or 0) if samples else 0.0
            if start >= 0.5:
                out.append(
                    f"Run {run.id} ({label}), step {step.index + 1}: {start:.1f} s of test-file layout "
                    "before the first I/O; not counted as measured time, and the charts over time start "
                    "at the first I/O."
                )
    return out

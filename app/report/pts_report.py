"""The PTS-style part of a report (Qt-free): for each `fiometer pts` run its header facts (test, start and end,
PTS revision and variant, the device, who tested), the test platform, device and set-up blocks, the
steady-state convergence and measurement-window plots, the determination table and the test's own tables
and plots; for two or more PTS runs of the same test a comparison table. Built from app.analysis.pts."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from app.analysis.pts import PtsRun, pts_of
from app.model.metrics import Metrics
from app.model.pts import IOPS_READS, IOPS_SIZES, LATENCY_READS, LATENCY_SIZES, size_words
from app.model.units import format_bytes
from app.report.charts import LineChart, LineSeries, run_color
from app.report.tables import Cell, Column, Row, Table, num, pct_cell, sig_decimals
from app.store.records import Run

UNITS = {"iops": "IOPS", "mbps": "MB/s", "lat_ms": "ms"}
BAND_COLOR, FIT_COLOR, AVG_COLOR = "#a8231b", "#e07b28", "#1d2733"


@dataclass
class PtsSection:
    pts: PtsRun
    label: str
    header: list[tuple[str, str]]  # the facts every page of the PDF carries (and the HTML's head)
    blocks: list[Table]  # header, platform, device, set-up and parameters
    determination: Table
    tables: list[Table]  # rounds, then the test's tables
    charts: list[LineChart] = field(default_factory=list)  # convergence, window, the test's plots

    @property
    def anchor(self) -> str:
        return f"pts-{self.pts.run.id}"

    @property
    def heading(self) -> str:
        p = self.pts
        return f"SNIA PTS {p.title} test ({p.variant_letter}): run {p.run.id} ({self.label})"


def _when(epoch: object, fallback: str | None) -> str:
    if isinstance(epoch, (int, float)) and epoch > 0:
        return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return fallback or "\u2013"


def _text(v: object) -> str:
    return str(v) if v not in (None, "") else "not told by the host"


def _sig(v: float | None) -> Cell:
    return num(v, sig_decimals(v)) if v is not None else Cell("\u2013")


def _pct(v: float) -> Cell:
    return Cell(f"{v:.1f} %", v / 100, None, "0.0%")


def device_words(d: dict[str, object]) -> str:
    name = " ".join(str(x) for x in (d.get("vendor"), d.get("model")) if x) or str(d.get("path", ""))
    cap = d.get("capacity")
    return name + (f", {format_bytes(int(cap))}" if isinstance(cap, int) and cap else "")


def header_facts(p: PtsRun) -> list[tuple[str, str]]:
    d = p.device
    return [
        ("Test", f"{p.title} test, run {p.run.id}"),
        ("PTS", f"{p.revision}, variant {p.variant_letter} ({p.record.get('variant', '')})"),
        ("Start", _when(p.record.get("started"), p.run.started)),
        ("End", _when(p.record.get("ended"), p.run.ended)),
        ("Device", f"{_model(d)} ({d.get('path', '')})"),
        ("Firmware", _text(d.get("firmware"))),
        ("Capacity", format_bytes(int(d["capacity"])) if isinstance(d.get("capacity"), int) else _text(None)),
        ("Interface", _text(d.get("interface"))),
        ("Tested by", _text(p.record.get("tested_by"))),
    ]


def _model(d: dict[str, object]) -> str:
    """Vendor and model as the host tells them, else the interface (a loop device), else say so."""
    words = " ".join(str(x) for x in (d.get("vendor"), d.get("model")) if x)
    return words or str(d.get("interface") or "") or "model not told by the host"


def _facts(key: str, title: str, pairs: list[tuple[str, str]]) -> Table:
    return Table(
        key, title, [Column("Item"), Column("Value")], [Row([Cell(a, a), Cell(b, b)]) for a, b in pairs]
    )


def _platform(p: PtsRun) -> list[tuple[str, str]]:
    h = p.run.host if isinstance(p.run.host, dict) else {}
    mem = h.get("memory_bytes")
    fio = ", ".join(p.run.fio_versions) or "\u2013"
    return [
        ("Host", _text(h.get("hostname"))),
        ("Operating system", f"{_text(h.get('os_release') or h.get('os'))}, kernel {_text(h.get('kernel'))}"),
        ("CPU", f"{_text(h.get('cpu_model'))}, {h.get('cpus', '?')} logical CPUs"),
        ("Memory", format_bytes(int(mem)) if isinstance(mem, int) else _text(None)),
        ("Test software", f"Fiometer {h.get('fiometer', '')} on fio {fio}"),
    ]


def _device(p: PtsRun) -> list[tuple[str, str]]:
    d = p.device
    out = [
        ("Path", _text(d.get("path"))),
        ("Vendor", _text(d.get("vendor"))),
        ("Model", _text(d.get("model"))),
        ("Firmware", _text(d.get("firmware"))),
        ("Serial", _text(d.get("serial"))),
        ("Capacity", f"{format_bytes(int(d.get('capacity') or 0))} ({int(d.get('capacity') or 0):,} bytes)"),
        ("Logical sector", f"{d.get('logical_sector', '?')} bytes"),
        ("Interface", _text(d.get("interface"))),
        ("Write cache (as the host says)", _text(d.get("write_cache"))),
    ]
    if d.get("backing_file"):
        out.append(("Backing file", str(d["backing_file"])))
    return out


def _resumed(p: PtsRun) -> dict[str, object] | None:
    r = p.record.get("resumed_from")
    return r if isinstance(r, dict) else None


def _purge_words(p: PtsRun) -> str:
    if (r := _resumed(p)) is not None:
        before = PtsRun(p.run, {"purge": r.get("purge")}, p.decision, {}, {})
        return f"in run {r.get('run')}, which this run resumes: {_purge_words(before)}"
    pu = p.record.get("purge")
    if not isinstance(pu, dict):
        return "not run (the run ended before it)"
    if pu.get("method") == "none":
        return "none: not purged"
    took = pu.get("seconds")
    detail = f": {pu['detail']}" if pu.get("detail") else ""
    return (
        f"{pu.get('command', pu.get('method'))}: {pu.get('outcome')}"
        + (f" in {float(took):.1f} s" if isinstance(took, (int, float)) else "")
        + detail
    )


def _precondition_words(p: PtsRun) -> str:
    s = p.settings
    step = p.record.get("fill_step")
    if (r := _resumed(p)) is not None:
        fill = r.get("fill_step")
        where = f"in run {r.get('run')}"
        return (
            f"{where} (step {fill + 1}), which this run resumes"
            if isinstance(fill, int)
            else f"none {where}, which this run resumes"
        )
    if step is None:
        return "none (the PTS WSAT test starts from the purged device)" if p.test == "wsat" else "did not run"
    m = p.whole.get(int(step))
    scale = float(s.get("precondition_scale", 1.0))
    moved = f"; {format_bytes(m.write_bytes)} written" if m else ""
    share = "" if scale >= 1 else f" of the first {scale * 100:g} % of the capacity (scaled down)"
    return f"workload independent: 2 passes of 128 KiB sequential writes{share} (step {int(step) + 1}){moved}"


def _setup(p: PtsRun) -> list[tuple[str, str]]:
    s = p.settings
    stim = s.get("stimulus_set", "full")
    return [
        ("Purge", _purge_words(p)),
        ("Preconditioning", _precondition_words(p)),
        (
            "Workload dependent preconditioning",
            f"the test stimulus in rounds of {s.get('round_time_s')} s per stimulus",
        ),
        ("Active range", f"{s.get('active_range_pct')} % of the capacity"),
        ("Outstanding I/O", f"QD {s.get('queue_depth')} x {s.get('threads')} thread(s)"),
        ("Data pattern", str(s.get("data_pattern", "random"))),
        (
            "Write cache",
            f"the PTS asks it {s.get('write_cache_asked')}; Fiometer leaves the device's setting as it is",
        ),
        ("Rounds", f"at most {s.get('rounds_max')}; {len(p.rounds)} run"),
        (
            "Stimuli per round",
            f"{len(p.stimuli)}"
            + (
                " (the tracking stimulus alone: a quick check, not the full test)"
                if stim == "tracking"
                else " (the full test)"
            ),
        ),
        ("Tracking variable", f"{s.get('variable_title')} ({s.get('tracking')})"),
        (
            "Steady state rule",
            "window of 5 rounds; range <= 20 % of the window's average; the least-squares line's range across it <= 10 % of the average",
        ),
    ]


def determination_table(p: PtsRun) -> Table:
    d = p.decision
    unit = UNITS.get(p.variable, "")
    avg = d.fit.average
    rows: list[tuple[str, Cell]] = [
        (
            "Measurement window",
            Cell(f"rounds {d.first_round}-{d.first_round + len(d.rounds) - 1}" if d.rounds else "\u2013"),
        ),
        (f"Average ({unit})", _sig(avg)),
        ("Range allowed (20 % of the average)", _sig(0.2 * avg)),
        ("Range measured (highest less lowest)", _sig(d.fit.range_value)),
        ("Range, % of the average", _pct(d.range_pct) if d.rounds else Cell("\u2013")),
        ("Fit excursion allowed (10 % of the average)", _sig(0.1 * avg)),
        ("Fit excursion measured (least-squares line across the window)", _sig(d.fit_excursion)),
        ("Fit excursion, % of the average", _pct(d.fit_excursion_pct) if d.rounds else Cell("\u2013")),
        (f"Least-squares slope ({unit} per round)", _sig(d.fit.slope)),
        ("Least-squares intercept (at the window's first round)", _sig(d.fit.intercept)),
        (
            "Steady state",
            Cell(f"reached at round {d.at_round}" if d.reached else f"not reached in {d.rounds_run} rounds"),
        ),
    ]
    return Table(
        f"pts-determination-{p.run.id}",
        f"Steady-state determination: {p.settings.get('variable_title', '')} (run {p.run.id})",
        [Column("Criterion"), Column("Value")],
        [Row([Cell(a, a), c]) for a, c in rows],
        [
            d.sentence(),
            "In the measurement-window plot the 90 % and 110 % lines bound a 20 % range centred on the average; "
            "the least-squares line may rise or fall at most 10 % of the average across the window.",
        ],
    )


def rounds_table(p: PtsRun) -> Table:
    unit = UNITS.get(p.variable, "")
    total = 0
    rows = []
    window = {int(r.get("round", 0)) for r in p.window_rounds()}
    for r in p.rounds:
        total += int(r.get("written") or 0)
        n = int(r.get("round", 0))
        rows.append(
            Row(
                [
                    num(n, 0),
                    _sig(r.get("tracking")),
                    num((r.get("written") or 0) / 1e9, 3),
                    num(total / 1e9, 3),
                    Cell("yes" if n in window else ""),
                    Cell(_steps_words(p, r)),
                ]
            )
        )
    return Table(
        f"pts-rounds-{p.run.id}",
        f"Rounds: {p.settings.get('variable_title', '')} (run {p.run.id})",
        [
            Column("Round", True),
            Column(f"Tracking ({unit})", True),
            Column("GB written", True),
            Column("GB written, total", True),
            Column("In window"),
            Column("Steps"),
        ],
        rows,
    )


def _steps_words(p: PtsRun, r: dict[str, object]) -> str:
    """The round's steps (1-based) as runs: "2-57", "3", "2, 4-5"."""
    given = r.get("steps")
    steps = sorted(int(i) + 1 for i in given) if isinstance(given, list) else []
    spans: list[list[int]] = []
    for n in steps:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    words = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
    return words if r.get("run") in (None, p.run.id) else f"run {r.get('run')}: {words}"


def _avg(ms: list[Metrics], key: str) -> float | None:
    if not ms:
        return None
    if key == "iops":
        return sum(m.iops for m in ms) / len(ms)
    if key == "mbps":
        return sum(m.mbps for m in ms) / len(ms)
    if key == "lat_ms":
        lat = [
            (m.read_lat_sum_ns + m.write_lat_sum_ns) / n / 1e6
            for m in ms
            if (n := m.read_lat_n + m.write_lat_n)
        ]
        return sum(lat) / len(lat) if lat else None
    peaks = [max(m.read_lat_max_ns, m.write_lat_max_ns) / 1e6 for m in ms]
    return max(peaks)


def _index(p: PtsRun) -> dict[tuple[int, int], int]:
    """(reads %, block size) -> stimulus number, from the stimuli's names."""
    out = {}
    for i, name in enumerate(p.stimuli):
        for reads in range(101):
            for size in (*IOPS_SIZES, *LATENCY_SIZES, 1024 * 1024):
                if name.endswith(f"R/W {reads}/{100 - reads}") and f" {size_words(size)} " in name:
                    out[(reads, size)] = i
    return out


def _grid(
    p: PtsRun, key: str, reads: tuple[int, ...], sizes: tuple[int, ...], title: str, tkey: str
) -> Table:
    idx = _index(p)
    window = p.window_rounds()
    rows = []
    for size in sizes:
        cells = [Cell(size_words(size), size)]
        for r in reads:
            i = idx.get((r, size))
            cells.append(_sig(_avg(p.figures(i, window), key)) if i is not None else Cell("\u2013"))
        rows.append(Row(cells))
    return Table(
        f"{tkey}-{p.run.id}",
        title,
        [Column("Block size")] + [Column(f"R/W {r}/{100 - r}", True) for r in reads],
        rows,
        ["Each figure: the average over the measurement window's rounds (\u2013: not run in this run)."],
    )


def test_tables(p: PtsRun) -> list[Table]:
    if p.test == "iops":
        return [
            _grid(
                p,
                "iops",
                IOPS_READS,
                IOPS_SIZES,
                f"IOPS by block size and read/write mix (run {p.run.id})",
                "pts-iops",
            )
        ]
    if p.test == "latency":
        return [
            _grid(
                p,
                "lat_ms",
                LATENCY_READS,
                LATENCY_SIZES,
                f"Average latency, ms, QD 1 x 1 thread (run {p.run.id})",
                "pts-lat-avg",
            ),
            _grid(
                p,
                "max_ms",
                LATENCY_READS,
                LATENCY_SIZES,
                f"Maximum latency, ms, QD 1 x 1 thread (run {p.run.id})",
                "pts-lat-max",
            ),
        ]
    if p.test == "throughput":
        idx = _index(p)
        window = p.window_rounds()
        rows = []
        for reads, what in ((0, "sequential write"), (100, "sequential read")):
            i = idx.get((reads, 1024 * 1024))
            rows.append(
                Row(
                    [
                        Cell(f"1024 KiB {what}"),
                        _sig(_avg(p.figures(i, window), "mbps") if i is not None else None),
                    ]
                )
            )
        return [
            Table(
                f"pts-tp-{p.run.id}",
                f"Throughput, MB/s (run {p.run.id})",
                [Column("Stimulus"), Column("MB/s", True)],
                rows,
                ["Average over the measurement window's rounds."],
            )
        ]
    return []  # WSAT: the rounds table is its table (IOPS per round over the GB written)


def _round_ticks(n: int) -> list[tuple[float, str]]:
    step = max(1, (n + 9) // 10)
    return [(float(i), str(i)) for i in range(1, n + 1, step)]


def convergence_chart(p: PtsRun, color: str) -> LineChart:
    unit = UNITS.get(p.variable, "")
    points = [
        (float(r.get("round", 0)), float(r["tracking"])) for r in p.rounds if r.get("tracking") is not None
    ]
    series = [LineSeries(str(p.settings.get("tracking", "tracking")), points, color, 1.6, markers=True)]
    idx = _index(p)
    track = str(p.settings.get("tracking", ""))
    mix = track.rsplit("R/W ", 1)[-1]
    palette = ("#8a96a6", "#2a9d8f", "#9467bd", "#d14a4a", "#e07b28", "#17693a", "#b8860b", "#5b6673")
    others = [(k, i) for k, i in idx.items() if p.stimuli[i] != track and p.stimuli[i].endswith(mix)]
    for n, ((_, size), i) in enumerate(sorted(others, key=lambda x: -x[0][1])):
        pts = []
        for r in p.rounds:
            ms = p.figures(i, [r])
            v = _avg(ms, p.variable)
            if v is not None:
                pts.append((float(r.get("round", 0)), v))
        series.append(LineSeries(size_words(size), pts, palette[n % len(palette)], 1.0, markers=True))
    n = max(len(p.rounds), 1)
    return LineChart(
        f"pts-convergence-{p.run.id}",
        f"Steady-state convergence: {p.settings.get('variable_title', '')} per round (run {p.run.id})",
        "Round",
        unit,
        series,
        x_min=0.5,
        x_max=n + 0.5,
        x_ticks=_round_ticks(n),
    )


def window_chart(p: PtsRun, color: str) -> LineChart:
    d = p.decision
    unit = UNITS.get(p.variable, "")
    first = d.first_round
    xs = [float(first + i) for i in range(len(d.rounds))]
    avg = d.fit.average
    lo, hi = (xs[0] - 0.3, xs[-1] + 0.3) if xs else (0.0, 1.0)
    series = [
        LineSeries("tracking variable", list(zip(xs, d.rounds, strict=True)), color, 1.8, markers=True),
        LineSeries("average", [(lo, avg), (hi, avg)], AVG_COLOR, 1.0, dash=True),
        LineSeries("110 % of the average", [(lo, 1.1 * avg), (hi, 1.1 * avg)], BAND_COLOR, 1.0, dash=True),
        LineSeries("90 % of the average", [(lo, 0.9 * avg), (hi, 0.9 * avg)], BAND_COLOR, 1.0, dash=True),
        LineSeries(
            "least-squares line",
            [(x, d.fit.fit_at(x - first)) for x in xs],
            FIT_COLOR,
            1.4,
        ),
    ]
    verdict = f"steady at round {d.at_round}" if d.reached else "not steady: the last rounds"
    top = max([*d.rounds, 1.1 * avg]) * 1.08 if d.rounds else None
    return LineChart(
        f"pts-window-{p.run.id}",
        f"Measurement window, rounds {first}-{first + len(d.rounds) - 1}: {verdict} (run {p.run.id})",
        "Round",
        unit,
        series,
        y_max=top,
        x_min=lo,
        x_max=hi,
        x_ticks=[(x, str(int(x))) for x in xs],
    )


def _iops_plot(p: PtsRun) -> LineChart | None:
    idx = _index(p)
    window = p.window_rounds()
    palette = ("#1f5fa8", "#2a9d8f", "#9467bd", "#d14a4a", "#e07b28", "#17693a", "#8a96a6")
    series = []
    for n, reads in enumerate(IOPS_READS):
        pts = []
        for size in sorted(IOPS_SIZES):
            i = idx.get((reads, size))
            v = _avg(p.figures(i, window), "iops") if i is not None else None
            if v is not None:
                pts.append((size / 1024, v))
        if pts:
            series.append(LineSeries(f"R/W {reads}/{100 - reads}", pts, palette[n], 1.3, markers=True))
    if sum(len(s.points) for s in series) < 2:
        return None
    return LineChart(
        f"pts-iops-plot-{p.run.id}",
        f"IOPS by block size, per read/write mix (measurement window average; run {p.run.id})",
        "Block size (KiB)",
        "IOPS",
        series,
        x_log2=True,
        x_ticks=[(size / 1024, f"{size / 1024:g}") for size in sorted(IOPS_SIZES)],
    )


def _wsat_plot(p: PtsRun, color: str) -> LineChart:
    total, pts = 0, []
    for r in p.rounds:
        total += int(r.get("written") or 0)
        if r.get("tracking") is not None:
            pts.append((total / 1e9, float(r["tracking"])))
    return LineChart(
        f"pts-wsat-{p.run.id}",
        f"Write saturation: 4 KiB random write IOPS over the data written (run {p.run.id})",
        "GB written (total)",
        "IOPS",
        [LineSeries("IOPS per round", pts, color, 1.6, markers=True)],
        x_min=0,
    )


def pts_section(run: Run, label: str, side: int) -> PtsSection | None:
    p = pts_of(run)
    if p is None:
        return None
    color = run_color(max(side, 1))
    head = header_facts(p)
    blocks = [
        _facts(f"pts-header-{run.id}", f"PTS report header (run {run.id})", head),
        _facts(f"pts-platform-{run.id}", f"Test platform (run {run.id})", _platform(p)),
        _facts(f"pts-device-{run.id}", f"Device under test (run {run.id})", _device(p)),
        _facts(f"pts-setup-{run.id}", f"Set-up and test parameters (run {run.id})", _setup(p)),
    ]
    charts = [convergence_chart(p, color), window_chart(p, color)]
    extra = _iops_plot(p) if p.test == "iops" else _wsat_plot(p, color) if p.test == "wsat" else None
    if extra is not None:
        charts.append(extra)
    return PtsSection(
        p, label, head, blocks, determination_table(p), [rounds_table(p), *test_tables(p)], charts
    )


def pts_sections(runs: list[tuple[Run, str, int]]) -> list[PtsSection]:
    """The PTS sections of a report's runs: (run, its side's label, the side's number) each."""
    return [s for run, label, side in runs if (s := pts_section(run, label, side)) is not None]


def pts_comparison(sections: list[PtsSection]) -> Table | None:
    """Two or more PTS runs side by side: steady state, the window's average and its change from the first."""
    if len(sections) < 2:
        return None
    base = sections[0].pts.decision.fit.average
    rows = []
    for s in sections:
        p, d = s.pts, s.pts.decision
        change = (d.fit.average - base) / base * 100 if base else None
        rows.append(
            Row(
                [
                    Cell(f"run {p.run.id} ({s.label})"),
                    Cell(f"{p.title} ({p.variant_letter})"),
                    Cell(device_words(p.device)),
                    Cell(str(p.device.get("firmware") or "\u2013")),
                    Cell(f"round {d.at_round}" if d.reached else f"not reached in {d.rounds_run}"),
                    _sig(d.fit.average),
                    Cell(UNITS.get(p.variable, "")),
                    pct_cell(change) if s is not sections[0] and change is not None else Cell("\u2013"),
                ]
            )
        )
    tests = {s.pts.test for s in sections}
    notes = (
        []
        if len(tests) == 1
        else ["The runs ran different PTS tests: their figures are not the same measure."]
    )
    if any(s.pts.variable == "lat_ms" for s in sections):
        notes.append("Latency: lower is better.")
    return Table(
        "pts-compare",
        "PTS comparison: steady-state figure of each run (measurement window average)",
        [
            Column("Run"),
            Column("Test"),
            Column("Device"),
            Column("Firmware"),
            Column("Steady state"),
            Column("Window average", True),
            Column("Unit"),
            Column("Change", True),
        ],
        rows,
        notes,
    )

"""The report's Validity section (first in the report) and a curve run's table (Qt-free): each run's validity
notes (app.analysis.validity), what one side of a comparison carries and the other does not, and for a
`fiometer curve` run the load that kept its p99 limit."""

from __future__ import annotations

from app.analysis.curve import curve_of
from app.analysis.iometer_import import is_iometer_run
from app.analysis.validity import Note, differences, lines, notes_of, unjudged_of
from app.report.tables import Cell, Column, Row, Table, metric, num
from app.store.database import Store
from app.store.records import Run


def run_notes_of(store: Store, report) -> dict[int, list[Note]]:
    """Each Fiometer run's validity notes by run id (an imported Iometer run has none)."""
    return {s.run.id: notes_of(s.run, store) for s in report.runs if not is_iometer_run(s.run)}


def validity_lines(store: Store, report, by_run: dict[int, list[Note]] | None = None) -> list[str]:
    """One line per note of every run in the report (labelled by its side), then the comparisons' differences;
    a single line saying so when no run carries a note."""
    out: list[str] = []
    by_run = run_notes_of(store, report) if by_run is None else by_run
    said: dict[str, list[str]] = {}  # a note every run carries alike is said once, naming the runs
    unjudged_lines: dict[str, list[str]] = {}  # what was not judged, once per wording
    for section in report.runs:
        run = section.run
        if run.id not in by_run:
            continue
        name = f"Run {run.id}" + (f" ({section.label})" if section.label != f"Run {run.id}" else "")
        for line in lines(by_run[run.id]):
            said.setdefault(line, []).append(name)
        unjudged = unjudged_of(run, store)
        if unjudged:
            unjudged_lines.setdefault(f"{unjudged}.", []).append(name)
    for line, names in said.items():
        who = names[0] if len(names) == 1 else "Runs " + ", ".join(n.removeprefix("Run ") for n in names)
        out.append(f"{who}: {line}")
    for i, comparison in enumerate(report.comparisons, 1):
        base = [n for r in report.baseline.runs for n in by_run.get(r.id, [])]
        cand = [n for r in comparison.candidate.runs for n in by_run.get(r.id, [])]
        out += differences(base, cand, (report.labels[0], report.labels[i]), brief=True)
    if not out:
        out.append(
            "No validity notes: no run shows signs of cache, never-written or compressible data, a busy "
            "load generator, drifting IOPS, other traffic on its disks or hosts' clocks apart."
        )
    for line, names in unjudged_lines.items():
        who = names[0] if len(names) == 1 else "Runs " + ", ".join(n.removeprefix("Run ") for n in names)
        out.append(f"{who}: {line}")
    return out


def curve_table(run: Run) -> Table | None:
    """A curve run's search per access spec: its sentence as the table's note, a row per measured step."""
    results = curve_of(run)
    if not results:
        return None
    rows = []
    for r in results:
        for p in sorted(r.points, key=lambda p: (p.confirm, p.load)):
            step = f"{p.step + 1}{' (confirm)' if p.confirm else ''}"
            rows.append(
                Row(
                    [
                        num(p.load, 0),
                        metric(p.iops),
                        metric(p.mbps),
                        metric(p.p99_ms),
                        Cell(
                            "yes" if p.keeps(r.p99_max_ms) else "no", "yes" if p.keeps(r.p99_max_ms) else "no"
                        ),
                        Cell(step, step),
                    ],
                    group=r.label,
                )
            )
    return Table(
        f"curve-{run.id}",
        f"Run {run.id} \u2014 highest load within p99 {results[0].p99_max_ms:g} ms",
        [
            Column("Load", True),
            Column("IOPS", True),
            Column("MB/s", True),
            Column("p99 ms", True),
            Column("Within limit"),
            Column("Step"),
        ],
        rows,
        [r.sentence() for r in results],
        group_title="Spec",
    )


def curve_contents(run: Run) -> str | None:
    """The curve's answer as a line of the contents: "Curve answer, run 5: 2,000 IOPS at QD 192, p99 104 ms
    ≤ 150 ms"; None for a run that was not a curve."""
    results = curve_of(run)
    if not results:
        return None
    parts = []
    for r in results:
        a = r.answer
        if a is None:
            parts.append(f"{r.label}: no load kept p99 \u2264 {r.p99_max_ms:g} ms")
            continue
        lead = f"{a.iops:,.0f} IOPS" if r.metric == "iops" else f"{a.mbps:,.1f} MB/s"
        where = f"QD {a.load}" if r.dimension == "queue depth" else f"{a.load} workers"
        p99 = f"{a.p99_ms:.3g}" if a.p99_ms is not None else "?"
        parts.append(f"{lead} at {where}, p99 {p99} ms \u2264 {r.p99_max_ms:g} ms")
    return f"Curve answer, run {run.id}: " + "; ".join(parts)

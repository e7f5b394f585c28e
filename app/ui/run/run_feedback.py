"""What the Results Display says about the run beside its numbers (issue 38.5): the step running, with its
access specification and load, and a load search's progress: each load it measured with its p99 against the
limit, then its answer (the result panel, also in History's run view)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QWidget

from app.ui.fold_box import ElidedLabel, FoldBox

if TYPE_CHECKING:
    from app.analysis.curve import SpecCurveResult

SEARCH_STYLE = "#loadSearchBox { border-left: 4px solid #3d7fc4; background: rgba(61, 127, 196, 36); }"
SEARCH_TAB = "Load search answer"  # History's run view: the answer and the loads measured, as a table
CURVE_COLUMNS = ("Load", "IOPS", "MB/s", "p99 ms", "Within the limit", "Step")  # the load: its dimension


def load_text(step: Any) -> str:
    """A step's load in words: 'QD 16, 2 workers, 2 targets' (each queue depth where they differ)."""
    depths = "/".join(map(str, step.queue_depths)) or "0"
    workers = len(step.workers)
    targets = step.target_count
    return f"QD {depths}, {workers} worker{'s' * (workers != 1)}, {targets} target{'s' * (targets != 1)}"


def step_text(index: int, total: int, step: Any, searching: bool = False) -> str:
    """'Step 2 of 8: 4K random 70 % read — QD 16, 2 workers, 2 targets' (a load search has at most
    ``total`` steps: it chooses them as it goes)."""
    of = f"of at most {total}" if searching else f"of {total}"
    return f"Step {index + 1} {of}: {step.spec_label} \u2014 {load_text(step)}"


class NowLine(ElidedLabel):
    """One line above the statistics: the step running, its access specification and load (Iometer's
    status shows them too); after the run, the step it ended at. Hidden before the first run."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("", parent, tip_is_text=True)
        self.setObjectName("nowLine")
        f = self.font()
        f.setBold(True)
        self.setFont(f)
        self.step = ""
        self.hide()

    def running(self, text: str) -> None:
        self.step = text
        self.setText(f"Running: {text}")
        self.show()

    def clear(self) -> None:
        """A new run: nothing said until its first step starts (the last run's step is not this one's)."""
        self.step = ""
        self.setText("")
        self.hide()

    def ended(self, status: str) -> None:
        if self.step:
            self.setText(f"Run {status} \u2014 last: {self.step}")


def curve_html(results: list[SpecCurveResult]) -> str:
    """Each specification's answer in words, and the loads its search measured (by load, the confirming
    measurement last), as rich text: the result panel's, and History's."""
    from app.analysis.curve import table_rows

    out = []
    for r in results:
        names = (
            r.dimension.capitalize(),
            *CURVE_COLUMNS[1:4],
            f"\u2264 {r.p99_max_ms:g} ms",
            CURVE_COLUMNS[5],
        )
        head = "".join(f"<th align='left'>&nbsp;{escape(h)}&nbsp;</th>" for h in names)
        rows = "".join(
            "<tr>" + "".join(f"<td align='right'>&nbsp;{escape(c)}&nbsp;</td>" for c in row) + "</tr>"
            for row in table_rows(r)
        )
        out.append(
            f"<p style='margin: 2px 0'><b>{escape(r.sentence())}</b></p>"
            f"<table cellspacing='0' style='margin-bottom: 6px'><tr>{head}</tr>{rows}</table>"
        )
    return "".join(out)


class LoadSearchBox(FoldBox):
    """A load search's progress while it runs (the last load measured, against the limit; open: every load
    so far), then its result panel (open: each specification's answer and the loads measured)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("loadSearchBox")
        self.setStyleSheet(SEARCH_STYLE)
        self.limit_ms = 0.0
        self.lines: list[str] = []
        self.results: list[SpecCurveResult] = []
        self.hide()

    def begin(self, p99_max_ms: float) -> None:
        self.limit_ms = p99_max_ms
        self.lines = []
        self.results = []
        self.set_open(False)
        self.set_content(
            f"Load search (p99 \u2264 {p99_max_ms:g} ms): measuring the first load\u2026", "", more=False
        )
        self.show()

    def tried(self, line: str) -> None:
        """A load measured (``curve_runner.probe_line``'s words)."""
        self.lines.append(line)
        n = len(self.lines)
        self.set_content(
            f"Load search (p99 \u2264 {self.limit_ms:g} ms), {n} load{'s' * (n != 1)} measured: {line}",
            f"<b>Load search: p99 \u2264 {self.limit_ms:g} ms</b><ol style='margin: 0'>"
            + "".join(f"<li>{escape(t)}</li>" for t in self.lines)
            + "</ol>",
        )

    def finished(self, results: list[SpecCurveResult], status: str) -> None:
        """The result panel: each specification's answer (open, so that it is read)."""
        self.results = list(results)
        if not results:
            self.set_content(
                f"Load search {status}: no answer (nothing was measured to the end)",
                "",
                more=False,
            )
            return
        first = results[0].sentence()
        more = f"  (+{len(results) - 1} more)" if len(results) > 1 else ""
        self.set_content(
            f"Load search result: {first}{more}",
            f"<b>Load search result</b> (run {status}; its table: History, the run's {SEARCH_TAB} tab)"
            + "".join(
                f"<p style='margin: 2px 0'><b>{escape(r.sentence())}</b><br>Measured: "
                + escape(measured_words(r))
                + "</p>"
                for r in results
            ),
        )
        self.set_open(True)


def measured_words(r: SpecCurveResult) -> str:
    """The loads a search measured, in order, each with its p99 and whether it kept the limit: words that
    wrap in a narrow column (History shows them as a table)."""
    out = []
    for p in r.points:
        load = r.load_words(p.load) + (" (confirm)" if p.confirm else "")
        p99 = f"{p.p99_ms:.3g} ms" if p.p99_ms is not None else "none"
        out.append(f"{load}: p99 {p99} {'✓' if p.keeps(r.p99_max_ms) else '✗ over'}")
    return "; ".join(out)

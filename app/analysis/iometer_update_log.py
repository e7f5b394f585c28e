"""Iometer's per-update results file, ``inst<results file>``, written while a run goes.

Iometer 1.1.0 writes it when "Record Last Update Results" is ENABLED (docs/reference/iometer.md §3.6),
beside the results file, named ``inst`` + the results file's name, opened for appending:
- once per run (press of Start): the 'Test Type / 'Version / 'Time Stamp head;
- per test (step): the 'Access specifications block, 'Results and a header whose first column is
  ``TimeStamp`` (and which says ``MBps (Binary)`` where results.csv says ``MiBps (Binary)``);
- at every update (1 s): one ``WORKER`` row per active target, named after its worker, with the numbers
  since the previous update in the C++ stream's default format (6 significant digits) and no access
  specification name;
- when the test ends: a ``WORKER`` row per worker with the whole test's numbers and its access
  specification, the ``ALL`` row (fixed, 6 decimals) and 'Time Stamp; ``'End Test`` (or ``Aborted test``)
  after the last test.
Every row starts with the local time it was written. The columns and Fiometer's conventions for what fio
measures differently (raw times in ns, Processor Speed 1e9) are those of results.csv (iometer_csv.py).
``app.analysis.iometer_results_reader`` reads the file back, as it reads Iometer's own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO

from app import safe_files
from app.analysis.csv_safe import safe_cell
from app.analysis.iometer_csv import (
    AMBIGUOUS,
    ASSIGNMENT_INDEX,
    COLUMNS,
    HEADER,
    TEST_TYPE_INDEX,
    CsvRow,
    row_cells,
)
from app.engine.jobs.jobfile import JobFile, worker_key
from app.engine.jobs.sequence import Step
from app.engine.run.runner import ManagerEndpoint, RunListener, StepOutcome
from app.engine.sampling.telemetry import Sample
from app.engine.transports.transport import Message
from app.model.plan import AccessSpec, Plan
from app.store.records import Run

UPDATE_HEADER = "TimeStamp," + HEADER.replace("MiBps (Binary)", "MBps (Binary)")
_RAW_RUN_TIME = COLUMNS.index("Total Raw Run Time")


def update_log_path(results_file: str | Path) -> Path:
    """Where Iometer puts the per-update file: beside the results file, ``inst`` + its name."""
    p = Path(results_file)
    return p.with_name("inst" + p.name)


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S:") + f"{t.microsecond // 1000:03d}"


def stream_number(cell: str) -> str:
    """A fixed-point cell as C++'s default stream writes a double (``%g``; MSVC's three-digit exponent,
    as in Iometer's own files: ``3.91406e+006``). Integers and empty cells are left as they are."""
    if "." not in cell:
        return cell
    text = f"{float(cell):g}"
    if "e" in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}e{exp[0]}{int(exp[1:]):03d}"
    return text


def update_row_cells(row: CsvRow) -> list[str]:
    """One per-update row: results.csv's cells in stream format, Total Raw Run Time 0 (as Iometer writes)."""
    cells = [stream_number(c) for c in row_cells(row)]
    cells[_RAW_RUN_TIME] = "0"
    return cells


def head_lines(test_type: str, description: str, when: datetime) -> list[str]:
    return [
        "'Test Type,Test Description",
        f"{TEST_TYPE_INDEX.get(test_type, 0)},{safe_cell(description.replace(',', '-'))}",
        "'Version",
        "1.1.0",
        "'Time Stamp",
        stamp(when),
    ]


def test_lines(specs: list[AccessSpec]) -> list[str]:
    """A test's access specifications and the per-update 'Results header."""
    out = ["'Access specifications"]
    for spec in specs:
        out += [
            "'Access specification name,default assignment",
            f"{safe_cell(spec.name.replace(',', ' '))},{ASSIGNMENT_INDEX.get(spec.default_assignment, 0)}",
            "'size,% of size,% reads,% random,delay,burst,align,reply",
        ]
        out += [ln.as_csv() + "," for ln in spec.lines]
    return out + ["'End access specifications", "'Results", UPDATE_HEADER]


def _common(values: list, differ):
    """The one value all have, else Iometer's mark for "differs" (-1, or no spec name)."""
    return values[0] if values and all(v == values[0] for v in values) else differ


class IometerUpdateLog(RunListener):
    """Appends a run to ``path`` (``update_log_path(results file)``) as Iometer's per-update file.

    Lines are flushed at every update, so the file is whole up to the last update if the process dies.
    The first write fault (disk full, file gone read-only) goes to ``on_error`` (else it is raised from the
    callback, for the caller's Fanout to report) and is kept in ``failure``; nothing more is written after
    it, and the run goes on (the results database still gets every update)."""

    def __init__(self, path: str | Path, now=datetime.now, on_error: Callable[[OSError], None] | None = None):
        self.path = Path(path)
        self._now = now
        self.on_error = on_error
        self.failure: OSError | None = None
        self._created = False  # this log created the file (a run that does not start removes it, if empty)
        self._file: TextIO | None = None
        self.plan: Plan | None = None
        self._workers: dict[
            tuple[str, str], tuple[str, int, int]
        ] = {}  # (manager, wkey) -> name, start, size
        self._qd: dict[tuple[str, str], int] = {}  # this step's queue depth per worker
        self._spec: dict[tuple[str, str], str] = {}  # this step's spec per worker
        self._anchor: datetime | None = None  # wall-clock time of this step's t = 0
        self._last: datetime | None = None  # the latest time stamp written
        self._stamps: set[str] = set()  # the updates written (one time stamp each; a batch may hold several)

    @property
    def updates_written(self) -> int:
        """Iometer's updates written: one per time stamp, however the reports were batched on arrival."""
        return len(self._stamps)

    def open(self) -> None:
        """Open (create or append to) the file now: a name that cannot be written is refused before the run."""
        if self._file is None:
            self._created = self._created or not self.path.exists()
            self._file = safe_files.open_append(
                self.path, encoding="cp1252", errors="replace", newline="\r\n"
            )

    def discard(self) -> None:
        """The run did not start: close, and remove the file if this log created it and wrote nothing."""
        self.close()
        with contextlib.suppress(OSError):
            if self._created and self.plan is None and self.path.stat().st_size == 0:
                self.path.unlink()

    def _write(self, lines: list[str]) -> None:
        if self.failure is not None:
            return
        try:
            self.open()
            assert self._file is not None
            self._file.write("".join(line + "\n" for line in lines))
            self._file.flush()
        except OSError as e:
            self.failure = e
            with contextlib.suppress(OSError):
                self.close()
            if self.on_error is None:
                raise
            self.on_error(e)

    def run_started(self, plan: Plan, steps: list[Step], endpoints: dict[str, ManagerEndpoint]) -> None:
        self.plan = plan
        for m in plan.managers:
            for wi, w in enumerate(m.workers):
                self._workers[(m.name, worker_key(wi))] = (w.name, w.start_sector, w.max_size)
        self._write(head_lines(plan.setup.test_type, plan.setup.description, self._now()))

    def step_started(self, step: Step, jobfiles: dict[str, JobFile]) -> None:
        assert self.plan is not None
        self._qd, self._spec, self._anchor = {}, {}, None
        for a in step.workers:
            key = (self.plan.managers[a.manager].name, worker_key(a.worker))
            self._qd[key] = a.queue_depth
            self._spec[key] = a.spec
        specs = [s for name in dict.fromkeys(a.spec for a in step.workers) if (s := self.plan.spec(name))]
        self._write(test_lines(specs))

    def _row(
        self, kind: str, manager: str, wkey: str, sample_metrics, spec: str, disks: int | None
    ) -> CsvRow:
        name, start, size = self._workers.get((manager, wkey), (wkey, AMBIGUOUS, AMBIGUOUS))
        return CsvRow(
            kind,
            name,
            sample_metrics,
            spec,
            None,
            None,
            disks,
            start,
            size,
            self._qd.get((manager, wkey), AMBIGUOUS),
        )

    def samples(self, step: Step, samples: list[Sample]) -> None:
        lines = []
        for s in samples:
            if s.level != "target" or s.interval.seconds <= 0 or s.worker is None:
                continue
            if self._anchor is None:  # fio's clock, placed on the wall clock by its first report of the step
                self._anchor = self._now() - timedelta(seconds=s.t)
            at = self._anchor + timedelta(seconds=s.t)
            self._last = max(self._last or at, at)
            when = stamp(at)
            row = self._row("WORKER", s.manager or "", s.worker, s.interval, "", 1)
            lines.append(when + "," + ",".join(safe_cell(c) for c in update_row_cells(row)))
        if lines:
            self._stamps.update(line.split(",", 1)[0] for line in lines)
            self._write(lines)

    def message(self, step: Step | None, message: Message) -> None:
        pass

    def _end_time(self) -> datetime:
        """Now, but never before the last update written (fio's clock can run ahead of the arrivals)."""
        now = self._now()
        return max(now, self._last) if self._last is not None else now

    def step_finished(self, outcome: StepOutcome) -> None:
        when = stamp(self._end_time())
        workers = [s for s in outcome.results if s.level == "worker"]
        targets = [s for s in outcome.results if s.level == "target"]
        lines = []
        for s in workers:
            manager = s.manager or ""
            disks = sum(1 for t in targets if t.manager == s.manager and t.worker == s.key)
            row = self._row("WORKER", manager, s.key, s.whole, self._spec.get((manager, s.key), ""), disks)
            cells = [stream_number(c) for c in row_cells(row)]  # with the test's Total Raw Run Time
            lines.append(when + "," + ",".join(safe_cell(c) for c in cells))
        for s in outcome.results:
            if s.level == "all":
                keys = [(w.manager or "", w.key) for w in workers]
                places = [self._workers.get(k, ("", AMBIGUOUS, AMBIGUOUS)) for k in keys]
                row = CsvRow(
                    "ALL",
                    "All",
                    s.whole,
                    _common([self._spec.get(k, "") for k in keys], ""),
                    len({w.manager for w in workers}),
                    len(workers),
                    len(targets),
                    _common([p[1] for p in places], AMBIGUOUS),
                    _common([p[2] for p in places], AMBIGUOUS),
                    _common([self._qd.get(k, AMBIGUOUS) for k in keys], AMBIGUOUS),
                )
                lines.append(when + "," + ",".join(safe_cell(c) for c in row_cells(row)))
        self._write(lines + ["'Time Stamp", stamp(self._end_time())])

    def run_finished(self, status: str) -> None:
        if self.plan is None:
            return
        try:
            self._write(["'End Test" if status == "complete" else "Aborted test"])
        finally:
            self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def append_results_file(path: str | Path, run: Run) -> None:
    """Append a stored run to Iometer's results file as Iometer does at the end of a series (a file can hold
    several), in the same layout as ``fiometer export --iometer-csv``."""
    from app.analysis.export_run import run_results_csv

    with safe_files.open_append(path, encoding="cp1252", errors="replace", newline="\r\n") as f:
        f.write(run_results_csv(run).replace("\r\n", "\n"))

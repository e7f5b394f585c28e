"""Reading an Iometer results.csv into series, tests and rows (docs/reference/iometer.md, "results.csv").

A file is a sequence of series (one per press of Start): a head ('Test Type, 'Version, 'Time Stamp), then
per test an 'Access specifications block, a 'Results header with ALL / MANAGER / PROCESSOR / WORKER / DISK
rows and an end 'Time Stamp, and finally 'End Test or 'Aborted test. Columns are found by their header
text, so the 1.1.0 80-column layout and the older 56-column one (and mixes of both in one file) read alike.
Fields are split on commas without quote handling, as Iometer writes them.

Iometer's per-update log (``inst<results name>``, written when "Record last update results to file" is on,
reference/iometer.md §3.6) reads alike: its header starts with a ``TimeStamp`` column and every row with the
time it was written. Its rows without an access specification name are the per-update ones (one per target
per update, labelled WORKER with the worker's name, holding the last update's numbers): they go to
``ResultsTest.updates``; the worker averages (with the spec name) and the ALL row at the end of each test
are the test's ``rows``. It has no MANAGER, PROCESSOR or DISK rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from app.model.plan import ASSIGNMENTS, AccessSpec, SpecLine

ROW_KINDS = ("ALL", "MANAGER", "PROCESSOR", "WORKER", "DISK", "NETWORK", "UNKNOWN")
TARGET_KINDS = ("DISK", "NETWORK", "UNKNOWN")
REQUIRED = ("target type", "target name", "iops", "read i/os", "write i/os")


class ResultsFileError(Exception):
    """The file cannot be read as an Iometer results.csv; str() is ``FILE:LINE: what, and what to do``."""


@dataclass
class ResultRow:
    kind: str
    name: str
    cells: dict[str, str]  # header text (stripped, lower case, no leading apostrophe) -> cell text
    line: int
    at: datetime | None = None  # per-update log: when Iometer wrote the row

    def text(self, column: str) -> str:
        return self.cells.get(column, "").strip()

    def number(self, column: str) -> float | None:
        """The cell as a number; None when the column is absent or empty. Raises ValueError if not a number."""
        cell = self.text(column)
        return None if cell == "" else float(cell)


@dataclass
class ResultsTest:
    specs: list[AccessSpec] = field(default_factory=list)
    rows: list[ResultRow] = field(default_factory=list)
    ended: datetime | None = None
    line: int = 0
    updates: list[ResultRow] = field(default_factory=list)  # per-update log: one row per target per update


@dataclass
class ResultsSeries:
    test_type: int = 0
    description: str = ""
    version: str = ""
    started: datetime | None = None
    tests: list[ResultsTest] = field(default_factory=list)
    end: str = ""  # "complete" ('End Test), "aborted" (Aborted test) or "" (the file stops)
    errors: list[str] = field(default_factory=list)  # ERROR: lines
    line: int = 0


def _stamp(text: str) -> datetime | None:
    text = text.strip()
    for fmt in ("%Y-%m-%d %H:%M:%S:%f", "%Y-%m-%d %H:%M:%S", "%a %b %d %H:%M:%S %Y"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def _column(header_cell: str) -> str:
    # the per-update log says "MBps (Binary)" where results.csv says "MiBps (Binary)"
    return header_cell.strip().lstrip("'").strip().casefold().replace("mbps (binary)", "mibps (binary)")


def decode(data: bytes) -> str:
    """Iometer writes the Windows ANSI code page; Fiometer's own export too. UTF-8 is accepted as well."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def parse_results(text: str, source: str = "results.csv") -> list[ResultsSeries]:
    """All series of a results file. Raises ResultsFileError naming the line for a file that is not one."""
    series = _Reader(text, source).read()
    if not any(t.rows or t.updates for s in series for t in s.tests):
        raise ResultsFileError(
            f"{source}:1: no test results found (no 'Results section with an ALL row); "
            "is this an Iometer results.csv?"
        )
    return series


_ENDS = {"end test": "complete", "aborted test": "aborted"}


class _Reader:
    """One pass over a results file's lines: each line read where the file stands (series, test, header)."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source
        self.series: list[ResultsSeries] = []
        self.cur: ResultsSeries | None = None
        self.test: ResultsTest | None = None
        self.header: list[str] | None = None
        self.stamped = False  # the current header is a per-update log's (a TimeStamp column first)
        self.i = 0

    def read(self) -> list[ResultsSeries]:
        while self.i < len(self.lines):
            after = self._line(self.lines[self.i])
            self.i = self.i + 1 if after is None else after
        return self.series

    def fail(self, n: int, what: str) -> ResultsFileError:
        return ResultsFileError(f"{self.source}:{n}: {what}")

    def next_line(self, what: str) -> str:
        if self.i + 1 >= len(self.lines):
            raise self.fail(self.i + 1, f"the file ends where {what} should follow; it may be cut short")
        self.i += 1
        return self.lines[self.i]

    def need_series(self, n: int) -> ResultsSeries:
        if self.cur is None:  # a file that starts mid-way (e.g. copied from a longer one): accept it
            self.cur = ResultsSeries(line=n)
            self.series.append(self.cur)
        return self.cur

    def _line(self, raw: str) -> int | None:
        """Reads the line at ``self.i``; returns the index of the next line to read where it is not the next."""
        n = self.i + 1
        stripped = raw.strip()
        first = stripped.split(",", 1)[0].strip()
        key = first.lstrip("'").casefold()
        section = self._SECTIONS.get(key) if first.startswith("'") else None
        if not stripped:
            pass
        elif section is not None:
            return section(self, n)
        elif key in _ENDS:
            self.need_series(n).end = _ENDS[key]
            self.test, self.header = None, None
        elif stripped.upper().startswith("ERROR:"):
            self.need_series(n).errors.append(stripped[6:].strip())
        elif self.stamped and self.header is not None and self.test is not None and _stamp(first) is not None:
            self._update_row(raw, n, self.header, self.test)
        elif first.upper() in ROW_KINDS:
            if self.header is None or self.test is None:
                raise self.fail(
                    n,
                    f"a {first.upper()} row before any 'Results header; the file may be cut or "
                    "edited: keep the lines from 'Test Type to 'End Test together",
                )
            self.test.rows.append(_row(raw, self.header, n, self.fail))
        elif not first.startswith("'"):
            raise self.fail(
                n,
                f"unexpected line {stripped[:60]!r}; an Iometer results.csv has rows starting with "
                "ALL, MANAGER, PROCESSOR, WORKER or DISK and section lines starting with an apostrophe",
            )
        # else: another section Iometer may write ('Results Display ...): not needed here
        return None

    def _test_type(self, n: int) -> None:
        self.cur = ResultsSeries(line=n)
        self.series.append(self.cur)
        self.test, self.header = None, None
        kind, _, desc = self.next_line("the test type and description").partition(",")
        try:
            self.cur.test_type = int(kind.strip() or 0)
        except ValueError:
            raise self.fail(
                self.i + 1, f"expected the test type number and description, found {kind!r}"
            ) from None
        self.cur.description = desc.strip()

    def _version(self, n: int) -> None:
        self.need_series(n).version = self.next_line("the Iometer version").strip()

    def _time_stamp(self, n: int) -> None:
        when = _stamp(self.next_line("a time stamp"))
        s = self.need_series(n)
        if self.test is not None and self.test.rows and self.test.ended is None:
            self.test.ended = when
        elif not s.tests and s.started is None:
            s.started = when

    def _specs(self, n: int) -> int:
        self.test = ResultsTest(line=n)
        self.need_series(n).tests.append(self.test)
        self.header = None
        return _read_specs(self.lines, self.i + 1, self.test, self.fail)

    def _results(self, n: int) -> None:
        if self.test is None or self.test.rows:
            self.test = ResultsTest(line=n)
            self.need_series(n).tests.append(self.test)
        head = self.next_line("the results header ('Target Type,...)")
        header = [_column(c) for c in head.split(",")]
        self.stamped = header[:1] == ["timestamp"]
        if self.stamped:
            header = header[1:]
        self.header = header
        if not header or header[0] != "target type":
            raise self.fail(
                self.i + 1, f"expected the results header starting 'Target Type, found {head[:40]!r}"
            )
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise self.fail(
                self.i + 1,
                f"the results header lacks the column(s) {', '.join(missing)}; "
                "this is not an Iometer results.csv header",
            )

    def _update_row(self, raw: str, n: int, header: list[str], test: ResultsTest) -> None:
        at, _, rest = raw.partition(",")
        row = _row(rest, header, n, self.fail)
        row.at = _stamp(at)
        per_update = row.kind == "WORKER" and not row.text("access specification name")
        (test.updates if per_update else test.rows).append(row)

    _SECTIONS: ClassVar[dict[str, Callable[[_Reader, int], int | None]]] = {
        "test type": _test_type,
        "version": _version,
        "time stamp": _time_stamp,
        "access specifications": _specs,
        "results": _results,
    }


def _row(raw: str, header: list[str], n: int, fail) -> ResultRow:
    cells = raw.split(",")
    kind = cells[0].strip().upper()
    row = ResultRow(
        kind, cells[1].strip() if len(cells) > 1 else "", dict(zip(header, cells, strict=False)), n
    )
    if kind != "PROCESSOR" and len(cells) < len(header):
        raise fail(n, f"{kind} row has {len(cells)} fields, the header {len(header)}; the line is cut short")
    return row


def _read_specs(lines: list[str], i: int, test: ResultsTest, fail) -> int:
    """Read an 'Access specifications block from line index i; returns the index after its end line."""
    spec: AccessSpec | None = None
    in_lines = False
    while i < len(lines):
        stripped = lines[i].strip()
        key = stripped.split(",", 1)[0].lstrip("'").strip().casefold()
        if stripped.startswith("'") and key == "end access specifications":
            return i + 1
        if stripped.startswith("'") and key == "access specification name":
            i += 1
            if i >= len(lines):
                break
            name, _, assign = lines[i].rpartition(",")
            if not name:
                name, assign = assign, "0"
            idx = int(assign) if assign.strip().isdigit() else 0
            spec = AccessSpec(name.strip(), [], ASSIGNMENTS[idx] if idx < len(ASSIGNMENTS) else "NONE")
            test.specs.append(spec)
            in_lines = False
        elif stripped.startswith("'") and key == "size":
            in_lines = True
        elif stripped.startswith("'") and key in ("results", "test type"):
            break
        elif in_lines and spec is not None and stripped:
            fields = [f for f in stripped.split(",") if f.strip() != ""]
            try:
                values = [int(f) for f in fields]
            except ValueError:
                raise fail(
                    i + 1,
                    f"access specification {spec.name!r}: expected eight numbers "
                    f"(size,% of size,% reads,% random,delay,burst,align,reply), found {stripped!r}",
                ) from None
            spec.lines.append(SpecLine(*values[:8]))
        i += 1
    raise fail(
        i,
        "the 'Access specifications block has no 'End access specifications line; the file may be cut short",
    )


def read_results_file(path: str | Path) -> list[ResultsSeries]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ResultsFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    return parse_results(decode(data), str(path))

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

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

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
    lines = text.splitlines()
    series: list[ResultsSeries] = []
    cur: ResultsSeries | None = None
    test: ResultsTest | None = None
    header: list[str] | None = None
    stamped = False  # the current header is a per-update log's (a TimeStamp column first)
    i = 0

    def fail(n: int, what: str) -> ResultsFileError:
        return ResultsFileError(f"{source}:{n}: {what}")

    def next_line(what: str) -> str:
        nonlocal i
        if i + 1 >= len(lines):
            raise fail(i + 1, f"the file ends where {what} should follow; it may be cut short")
        i += 1
        return lines[i]

    def need_series(n: int) -> ResultsSeries:
        nonlocal cur
        if cur is None:  # a file that starts mid-way (e.g. copied from a longer one): accept it
            cur = ResultsSeries(line=n)
            series.append(cur)
        return cur

    while i < len(lines):
        raw = lines[i]
        n = i + 1
        stripped = raw.strip()
        first = stripped.split(",", 1)[0].strip()
        key = first.lstrip("'").casefold()
        if not stripped:
            pass
        elif first.startswith("'") and key == "test type":
            cur = ResultsSeries(line=n)
            series.append(cur)
            test, header = None, None
            kind, _, desc = next_line("the test type and description").partition(",")
            try:
                cur.test_type = int(kind.strip() or 0)
            except ValueError:
                raise fail(i + 1, f"expected the test type number and description, found {kind!r}") from None
            cur.description = desc.strip()
        elif first.startswith("'") and key == "version":
            need_series(n).version = next_line("the Iometer version").strip()
        elif first.startswith("'") and key == "time stamp":
            when = _stamp(next_line("a time stamp"))
            s = need_series(n)
            if test is not None and test.rows and test.ended is None:
                test.ended = when
            elif not s.tests and s.started is None:
                s.started = when
        elif first.startswith("'") and key == "access specifications":
            test = ResultsTest(line=n)
            need_series(n).tests.append(test)
            header = None
            i = _read_specs(lines, i + 1, test, fail)
            continue
        elif first.startswith("'") and key == "results":
            if test is None or test.rows:
                test = ResultsTest(line=n)
                need_series(n).tests.append(test)
            head = next_line("the results header ('Target Type,...)")
            header = [_column(c) for c in head.split(",")]
            stamped = header[:1] == ["timestamp"]
            if stamped:
                header = header[1:]
            if not header or header[0] != "target type":
                raise fail(i + 1, f"expected the results header starting 'Target Type, found {head[:40]!r}")
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise fail(
                    i + 1,
                    f"the results header lacks the column(s) {', '.join(missing)}; "
                    "this is not an Iometer results.csv header",
                )
        elif key == "end test":
            need_series(n).end = "complete"
            test, header = None, None
        elif key == "aborted test":
            need_series(n).end = "aborted"
            test, header = None, None
        elif stripped.upper().startswith("ERROR:"):
            need_series(n).errors.append(stripped[6:].strip())
        elif stamped and header is not None and test is not None and _stamp(first) is not None:
            at, _, rest = raw.partition(",")
            row = _row(rest, header, n, fail)
            row.at = _stamp(at)
            per_update = row.kind == "WORKER" and not row.text("access specification name")
            (test.updates if per_update else test.rows).append(row)
        elif first.upper() in ROW_KINDS:
            if header is None or test is None:
                raise fail(
                    n,
                    f"a {first.upper()} row before any 'Results header; the file may be cut or "
                    "edited: keep the lines from 'Test Type to 'End Test together",
                )
            test.rows.append(_row(raw, header, n, fail))
        elif first.startswith("'"):
            pass  # another section Iometer may write ('Results Display ...): not needed here
        else:
            raise fail(
                n,
                f"unexpected line {stripped[:60]!r}; an Iometer results.csv has rows starting with "
                "ALL, MANAGER, PROCESSOR, WORKER or DISK and section lines starting with an apostrophe",
            )
        i += 1
    if not any(t.rows or t.updates for s in series for t in s.tests):
        raise ResultsFileError(
            f"{source}:1: no test results found (no 'Results section with an ALL row); "
            "is this an Iometer results.csv?"
        )
    return series


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

"""Iometer 1.1.0 results.csv, written from stored results (docs/reference/iometer.md, "results.csv").

The layout is Iometer's: a head block, then per test the active access specs, the 80-column
'Results header and ALL / MANAGER / WORKER / DISK rows, and time stamps, so spreadsheets built for
Iometer keep working. Conventions for what fio does not measure the same way:
- raw "tick" columns are nanoseconds, with Processor Speed = 1e9 ticks/s;
- transactions = I/Os (fio has no reply I/O), connections = 0;
- errors are fio's totals; the read/write error split is left empty (fio does not report it);
- system CPU columns are left empty (fio measures only its own CPU);
- PROCESSOR rows are not written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from app.analysis.csv_safe import safe_cell
from app.model.metrics import Metrics
from app.model.plan import AccessSpec

HEADER = (
    "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,"
    "MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),"
    "Write MBps (Decimal),Transactions per Second,Connections per Second,Average Response Time,"
    "Average Read Response Time,Average Write Response Time,Average Transaction Time,Average Connection Time,"
    "Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,Maximum Transaction Time,"
    "Maximum Connection Time,Errors,Read Errors,Write Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,"
    "Connections,Transactions per Connection,Total Raw Read Response Time,Total Raw Write Response Time,"
    "Total Raw Transaction Time,Total Raw Connection Time,Maximum Raw Read Response Time,"
    "Maximum Raw Write Response Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,"
    "Total Raw Run Time,Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,"
    "% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,"
    "Packets/Second,Packet Errors,Segments Retransmitted/Second,0 to 50 uS,50 to 100 uS,100 to 200 uS,"
    "200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,"
    "30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,"
    "5 to 10 s, >= 10 s"
)
COLUMNS = HEADER.split(",")
# Upper edges of Iometer's latency bins in ns; the "2 to 4.7 s" bin really ends at 4 s.
BIN_EDGES_NS = [int(x * 1000) for x in (50, 100, 200, 500)] + [
    int(ms * 1_000_000) for ms in (1, 2, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000, 2000, 4000, 5000, 10000)
]
TEST_TYPE_INDEX = {
    "NORMAL": 0,
    "CYCLE_TARGETS": 1,
    "CYCLE_WORKERS": 2,
    "INCREMENT_TARGETS_PARALLEL": 3,
    "INCREMENT_TARGETS_SERIAL": 4,
    "CYCLE_WORKERS_AND_TARGETS": 5,
    "CYCLE_OUTSTANDING_IOS": 6,
    "CYCLE_OUTSTANDING_IOS_AND_TARGETS": 7,
}
ASSIGNMENT_INDEX = {"NONE": 0, "ALL": 1, "DISK": 2, "NET": 3}
AMBIGUOUS = -1


@dataclass
class CsvRow:
    kind: str  # ALL | MANAGER | WORKER | DISK
    name: str
    metrics: Metrics
    spec: str = ""
    managers: int | None = None
    workers: int | None = None
    disks: int | None = None
    start_sector: int = AMBIGUOUS
    max_size: int = AMBIGUOUS
    queue_depth: int = AMBIGUOUS


@dataclass
class CsvStep:
    specs: list[AccessSpec]
    started: datetime
    ended: datetime
    rows: list[CsvRow] = field(default_factory=list)  # ALL, then per manager: MANAGER, (WORKER, DISK*)*


def iometer_bins(hist: dict[int, int]) -> list[int]:
    out = [0] * (len(BIN_EDGES_NS) + 1)
    for value, count in hist.items():
        i = next((k for k, edge in enumerate(BIN_EDGES_NS) if value < edge), len(BIN_EDGES_NS))
        out[i] += count
    return out


def _f(v: float) -> str:
    return f"{v:.6f}"


def _opt(v: int | None) -> str:
    return "" if v is None else str(v)


def row_cells(row: CsvRow) -> list[str]:
    m = row.metrics
    all_row = row.kind == "ALL"
    lat_max_raw = max(m.read_lat_max_ns, m.write_lat_max_ns)
    raw = (
        ["", "", "", "", "", "", "", "", ""]
        if all_row
        else [
            str(round(m.read_lat_sum_ns)),
            str(round(m.write_lat_sum_ns)),
            str(round(m.read_lat_sum_ns + m.write_lat_sum_ns)),
            "0",
            str(round(m.read_lat_max_ns)),
            str(round(m.write_lat_max_ns)),
            str(round(lat_max_raw)),
            "0",
            str(round(m.seconds * 1e9)),
        ]
    )
    hist = dict(m.read_hist)
    for k, v in m.write_hist.items():
        hist[k] = hist.get(k, 0) + v
    cells = [
        row.kind,
        row.name.replace(",", " ").replace("\r", " ").replace("\n", " "),
        row.spec,
        _opt(row.managers),
        _opt(row.workers),
        _opt(row.disks),
        _f(m.iops),
        _f(m.read_iops),
        _f(m.write_iops),
        _f(m.mibps),
        _f(m.read_mibps),
        _f(m.write_mibps),
        _f(m.mbps),
        _f(m.read_mbps),
        _f(m.write_mbps),
        _f(m.iops),
        _f(0.0),
        _f(m.lat_mean_ms),
        _f(m.read_lat_mean_ms),
        _f(m.write_lat_mean_ms),
        _f(m.lat_mean_ms),
        _f(0.0),
        _f(m.lat_max_ms),
        _f(m.read_lat_max_ms),
        _f(m.write_lat_max_ms),
        _f(m.lat_max_ms),
        _f(0.0),
        str(m.errors),
        "",
        "",
        str(m.read_bytes),
        str(m.write_bytes),
        str(m.read_ios),
        str(m.write_ios),
        "0",
        str(AMBIGUOUS),
        *raw,
        str(row.start_sector),
        str(row.max_size),
        str(row.queue_depth),
        "",
        "",
        "",
        "",
        "",  # system CPU: not measured by fio
        "" if all_row else "1000000000.000000",
        "",
        "",
        "",
        "",
        "",
        *(str(c) for c in iometer_bins(hist)),
    ]
    assert len(cells) == len(COLUMNS)
    return cells


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S:") + f"{t.microsecond // 1000:03d}"


def write_results_csv(
    test_type: str, description: str, started: datetime, steps: list[CsvStep], completed: bool
) -> str:
    """The whole results file text (CRLF line ends, as Iometer writes on Windows)."""
    out = [
        "'Test Type,Test Description",
        f"{TEST_TYPE_INDEX.get(test_type, 0)},{safe_cell(description.replace(',', '-'))}",
        "'Version",
        "1.1.0",
        "'Time Stamp",
        _stamp(started),
    ]
    for step in steps:
        out += ["'Access specifications"]
        for spec in step.specs:
            out += [
                "'Access specification name,default assignment",
                f"{safe_cell(spec.name.replace(',', ' '))},{ASSIGNMENT_INDEX.get(spec.default_assignment, 0)}",
                "'size,% of size,% reads,% random,delay,burst,align,reply",
            ]
            out += [ln.as_csv() + "," for ln in spec.lines]
        out += ["'End access specifications", "'Results", HEADER]
        out += [",".join(safe_cell(c) for c in row_cells(r)) for r in step.rows]
        out += ["'Time Stamp", _stamp(step.ended)]
    out.append("'End Test" if completed else "Aborted test")
    return "\r\n".join(out) + "\r\n"

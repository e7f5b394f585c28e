"""The in-memory form of an Iometer configuration file (.icf), every version.

The dataclasses hold what the file says, in Iometer's own terms and units (sizes in bytes,
disk sizes in sectors, times in seconds). Fields whose presence depends on the file's version
use ``None`` for "the line was absent", so a writer can reproduce the same variant.
Diagnostics and line numbers are excluded from equality: parse(write(parse(f))) == parse(f).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]

# Iometer enums, in the order of their legacy integer values.
TEST_TYPES = (
    "NORMAL",
    "CYCLE_TARGETS",
    "CYCLE_WORKERS",
    "INCREMENT_TARGETS_PARALLEL",
    "INCREMENT_TARGETS_SERIAL",
    "CYCLE_WORKERS_AND_TARGETS",
    "CYCLE_OUTSTANDING_IOS",
    "CYCLE_OUTSTANDING_IOS_AND_TARGETS",
)
RECORD_RESULTS = ("ALL", "NO_TARGETS", "NO_WORKERS", "NO_MANAGERS", "NONE")
STEP_TYPES = ("LINEAR", "EXPONENTIAL")
ASSIGNMENTS = ("NONE", "ALL", "DISK", "NET")
NUMBER_OF_CPUS = -1  # value of "Default ... Workers to Spawn" meaning NUMBER_OF_CPUS


@dataclass
class Diagnostic:
    severity: Severity
    source: str  # file path or "<string>"
    line: int  # 1-based; 0 when the problem concerns the whole file
    message: str  # says what was found and what was expected

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.severity}: {self.message}"


@dataclass
class Cycling:
    start: int = 1
    step: int = 1
    step_type: str = "LINEAR"  # one of STEP_TYPES


@dataclass
class QueueDepthCycling:
    start: int = 1
    end: int = 32
    step: int = 2
    step_type: str = "EXPONENTIAL"


@dataclass
class TestSetup:
    description: str = ""
    run_time: tuple[int, int, int] = (0, 0, 0)  # hours, minutes, seconds; 0:0:0 = until stopped
    ramp_up: int = 0  # seconds
    disk_workers_to_spawn: int = NUMBER_OF_CPUS
    network_workers_to_spawn: int = 0
    record_results: str = "ALL"  # one of RECORD_RESULTS
    worker_cycling: Cycling = field(default_factory=Cycling)
    disk_cycling: Cycling = field(default_factory=Cycling)
    queue_depth_cycling: QueueDepthCycling = field(default_factory=QueueDepthCycling)
    test_type: str = "NORMAL"  # one of TEST_TYPES
    # 'Default Workers to Spawn' (ancient files) was read instead of the disk/network pair
    ancient_default_workers: bool = False

    @property
    def run_seconds(self) -> int:
        h, m, s = self.run_time
        return h * 3600 + m * 60 + s


@dataclass
class BarChart:
    index: int  # 1..6
    statistic: str
    manager: tuple[int, str] | None = None  # (id, name)
    worker: tuple[int, str] | None = None


@dataclass
class ResultsDisplay:
    # None: the pre-1.1.0-final key 'Update Frequency,Update Type' (no ENABLED/DISABLED field)
    record_last_update: bool | None = None
    update_frequency: int = 0  # seconds; 0 = infinity
    update_type: str = "WHOLE_TEST"  # or LAST_UPDATE
    bar_charts: list[BarChart] = field(default_factory=list)


@dataclass
class SpecLine:
    size: int = 2048  # bytes
    of_size: int = 100  # percent of bursts
    reads: int = 67  # percent
    random: int = 100  # percent
    delay: int = 0  # milliseconds before each burst
    burst: int = 1  # I/Os per burst
    align: int = 0  # bytes; 0 = sector boundaries
    reply: int = 0  # bytes; 0 = no reply


@dataclass
class AccessSpec:
    name: str
    default_assignment: str = "NONE"  # one of ASSIGNMENTS
    lines: list[SpecLine] = field(default_factory=list)
    line_no: int = field(default=0, compare=False)


@dataclass
class Target:
    name: str  # as Iometer wrote it: 'C:', 'C: "LABEL"', 'PHYSICALDRIVE:1', '1: "..."', 'sdb', '/ [ext4]'
    type: str = "DISK"  # DISK | NETWORK,TCP | NETWORK,VI
    partner_manager: tuple[int, str] | None = None  # NETWORK targets: 'Target manager ID, manager name'
    line_no: int = field(default=0, compare=False)


@dataclass
class Worker:
    name: str
    type: str = "DISK"  # DISK | NETWORK,TCP | NETWORK,VI
    has_default_settings: bool = True  # the 'Default target settings for worker' block was present
    queue_depth: int = 1
    test_connection_rate: bool = False
    transactions_per_connection: int = 1
    use_fixed_seed: bool | None = None  # None: the 3-value key (pre-1.1.0)
    fixed_seed: int = 0
    disk_max_size: int | None = 0  # sectors; None for network workers (line absent)
    disk_start_sector: int | None = 0
    data_pattern: int | None = None  # None: the 2-value disk key (pre-1.1.0); else 0/1/2
    local_interface: str | None = None  # NETWORK workers
    vi_outstanding: int | None = None  # VI workers
    assigned_specs: list[str] | None = None  # None: the block was absent
    targets: list[Target] | None = None  # None: the block was absent
    line_no: int = field(default=0, compare=False)


@dataclass
class Manager:
    id: int
    name: str
    address: str = ""  # where the file's author ran Dynamo: information only, never a place to connect
    workers: list[Worker] = field(default_factory=list)
    line_no: int = field(default=0, compare=False)


@dataclass
class IcfDocument:
    version: str = "1.1.0"  # text after 'Version ' on the first line, trimmed
    test_setup: TestSetup | None = None  # None: section absent
    results_display: ResultsDisplay | None = None
    access_specs: list[AccessSpec] | None = None
    managers: list[Manager] | None = None
    # how the file was written: "new" (named specs) or "old" (pre-1998.05.21 six-field lines)
    spec_format: str = "new"
    source: str = field(default="<string>", compare=False)
    diagnostics: list[Diagnostic] = field(default_factory=list, compare=False)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def spec(self, name: str) -> AccessSpec | None:
        """The access spec of that name (case-insensitive, as Iometer matches)."""
        for s in self.access_specs or []:
            if s.name.casefold() == name.casefold():
                return s
        return None


class IcfError(Exception):
    """Raised by load_strict() when the file has errors and by load() when it cannot be read; str() gives FILE:LINE: message."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))

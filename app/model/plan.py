"""The test plan: Iometer's managers, workers, targets, access specifications and test setup.

This is the one source of truth for what a run does. It keeps Iometer's own terms and units
(sizes in bytes, disk sizes in sectors, times in seconds) so an imported .icf keeps its meaning;
the engine translates to fio.
"""

from __future__ import annotations

from dataclasses import dataclass, field

IDLE = "Idle"  # Iometer's built-in spec that does no I/O
PRECONDITION_FILL = "Precondition: sequential fill"  # the spec label of a precondition fill step
LOCAL = "local"

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
STEP_TYPES = ("LINEAR", "EXPONENTIAL")
ASSIGNMENTS = ("NONE", "ALL", "DISK", "NET")
DEFAULT_TEST_FILE_SIZE = 1 << 30  # a test file's size when Maximum size is 0 (Iometer would fill the volume)
DATA_PATTERNS = ("repeating", "pseudo_random", "full_random")  # Iometer 0, 1, 2
# fio's I/O engine (TestSetup.engine): "auto" is the best the manager has (app.engine.jobs.engines)
AUTO_ENGINE = "auto"
ENGINES = (AUTO_ENGINE, "io_uring", "libaio", "posixaio", "psync", "windowsaio")
URING_OPTIONS = ("fixedbufs", "registerfiles", "sqthread_poll", "hipri")  # io_uring's, when it runs


@dataclass
class SpecLine:
    """One line of an access specification (Iometer's eight fields)."""

    size: int = 2048  # bytes per transfer
    of_size: int = 100  # percent of bursts that use this line
    reads: int = 67  # percent reads
    random: int = 100  # percent random
    delay: int = 0  # ms before each burst
    burst: int = 1  # I/Os per burst
    align: int = 0  # bytes; 0 = sector boundaries
    reply: int = 0  # bytes; 0 = no reply

    def as_csv(self) -> str:
        return ",".join(
            str(v)
            for v in (
                self.size,
                self.of_size,
                self.reads,
                self.random,
                self.delay,
                self.burst,
                self.align,
                self.reply,
            )
        )


@dataclass
class AccessSpec:
    name: str
    lines: list[SpecLine] = field(default_factory=lambda: [SpecLine()])
    default_assignment: str = "NONE"  # which new workers get it: NONE | ALL | DISK | NET
    description: str = ""


@dataclass
class Target:
    """A disk target: a test file on a volume, or a raw device.

    ``name`` is what Iometer called it (``C:``, ``PHYSICALDRIVE:1``, ``sdb``, ``/mnt/data [xfs]``)
    or a path. ``path`` is set when the user mapped it to a concrete file or device; otherwise the
    manager's OS decides (see app.engine.jobs.targets).
    """

    name: str
    path: str | None = None
    kind: str = "disk"  # disk | network
    partner_manager: str | None = None  # network targets: the manager owning the remote NIC
    port: int | None = None  # network targets: a fixed TCP port (None: a fresh one per step)


@dataclass
class Worker:
    name: str
    kind: str = "disk"  # disk | network_tcp | network_vi
    queue_depth: int = 1  # outstanding I/Os per target
    max_size: int = 0  # sectors; 0 = whole file or disk
    start_sector: int = 0
    data_pattern: int = 0  # index into DATA_PATTERNS
    fixed_seed: int | None = None  # None = seed from the clock (Iometer "use fixed seed" off)
    test_connection_rate: bool = False  # kept from Iometer; fio cannot reopen per N transactions
    transactions_per_connection: int = 1
    specs: list[str] = field(default_factory=list)  # assigned access spec names, in run order
    targets: list[Target] = field(default_factory=list)


@dataclass
class Manager:
    """A host that runs the workers.

    ``host`` is ``"local"`` for this machine, ``host[:port]`` for a machine running ``fio --server``,
    or None when not yet chosen (an imported file's second manager): such a plan cannot run until
    the user maps it, because the address in an .icf is where its author ran Dynamo, not ours.
    """

    name: str
    host: str | None = LOCAL
    address_in_file: str = ""  # where an imported file's author ran Dynamo: information only
    workers: list[Worker] = field(default_factory=list)


@dataclass
class Cycling:
    start: int = 1
    step: int = 1
    step_type: str = "LINEAR"


@dataclass
class QueueDepthCycling:
    start: int = 1
    end: int = 32
    step: int = 2
    step_type: str = "EXPONENTIAL"


@dataclass
class Precondition:
    """Conditioning before the measured steps (the SNIA Performance Test Specification's idea).

    ``fill_passes`` sequential 128 KiB writes over every target first; then, with ``steady_state``, each
    worker's first access specification runs until its IOPS are steady: over ``window_rounds`` rounds of
    ``round_s`` seconds, the rounds' range (highest less lowest) within ``tolerance_pct`` of the window's mean
    and the fitted slope's excursion across the window within ``slope_pct`` of it (SNIA PTS) — or ``max_s``
    seconds have passed.
    """

    fill_passes: int = 0
    steady_state: bool = False
    round_s: int = 60
    window_rounds: int = 5
    tolerance_pct: int = 20
    slope_pct: int = 10
    max_s: int = 1800

    @property
    def enabled(self) -> bool:
        return self.fill_passes > 0 or self.steady_state


@dataclass
class IometerKeep:
    """What an .icf says that Fiometer does not use itself but keeps, so an export gives it back."""

    record_last_update: bool = False  # Iometer's per-update results file (inst<results>.csv)
    disk_workers_to_spawn: int = -1  # -1 = NUMBER_OF_CPUS
    network_workers_to_spawn: int = 0
    bar_charts: list[str] = field(default_factory=list)  # Results Display's six statistics; empty = Iometer's


@dataclass
class TestSetup:
    description: str = ""
    run_time: int = 0  # seconds per step; 0 = until stopped
    ramp_up: int = 0  # seconds
    test_type: str = "NORMAL"
    worker_cycling: Cycling = field(default_factory=Cycling)
    target_cycling: Cycling = field(default_factory=Cycling)
    queue_depth_cycling: QueueDepthCycling = field(default_factory=QueueDepthCycling)
    record_results: str = "ALL"
    update_frequency: int = 1  # seconds between live updates
    update_type: str = "WHOLE_TEST"  # or LAST_UPDATE
    # A timed transfer (as admins time dd): each step ends once every job has moved this many bytes, and
    # the run time becomes the step's upper limit. 0 = Iometer's usual timed steps.
    transfer_bytes: int = 0
    # Iometer always bypasses the OS cache (fio direct=1). False runs buffered I/O through it (direct=0), to see
    # what caching does: the run then carries a cache note (app.analysis.validity).
    direct_io: bool = True
    # fio's I/O engine (ENGINES) and, when it is io_uring, its options (URING_OPTIONS). Iometer has no such
    # choice: "auto" runs io_uring on a local Linux host whose kernel allows it, libaio on other Linux
    # hosts, windowsaio on Windows (app.engine.jobs.engines)
    engine: str = AUTO_ENGINE
    engine_options: list[str] = field(default_factory=list)
    precondition: Precondition = field(default_factory=Precondition)
    iometer: IometerKeep = field(default_factory=IometerKeep)


@dataclass
class FidelityNote:
    """Something Iometer does that fio cannot do exactly: kept in the plan and shown to the user."""

    where: str  # e.g. "access spec 'X' line 2" or "manager M / worker W"
    message: str


@dataclass
class Plan:
    name: str = "Untitled"
    setup: TestSetup = field(default_factory=TestSetup)
    specs: list[AccessSpec] = field(default_factory=list)
    managers: list[Manager] = field(default_factory=list)
    notes: list[FidelityNote] = field(default_factory=list)
    source: str = ""  # the file it came from, if imported

    def spec(self, name: str) -> AccessSpec | None:
        """Spec by name; case-insensitive as Iometer matches names."""
        for s in self.specs:
            if s.name.casefold() == name.casefold():
                return s
        return None

    def manager(self, name: str) -> Manager | None:
        for m in self.managers:
            if m.name == name:
                return m
        return None

"""The SNIA Solid State Storage Performance Test Specification (PTS v2.0.2) as Fiometer's plan: its tests,
their stimuli and tracking variables, the client and enterprise settings, and the plan a `fiometer pts` run
executes (pure: no OS calls; the device's capacity and sector are given).

A PTS run is: purge (app.engine.guards.purge), workload-independent preconditioning (twice the capacity in
128 KiB sequential writes: a fill step of ``PTS_FILL_PASSES`` passes), then rounds of the test's stimulus
until its tracking variable is steady by the PTS rule (app.model.steady_state.pts_steady_state) or
``rounds_max`` rounds have run (app.engine.run.pts_runner). Fiometer's reading of the specification, in its
own words; the names of the tests and settings are the specification's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.model.plan import AccessSpec, Manager, Plan, Precondition, SpecLine, Target, TestSetup, Worker

PTS_REVISION = "SNIA SSS PTS v2.0.2"
TESTS = ("iops", "throughput", "latency", "wsat")
VARIANTS = ("client", "enterprise")
STIMULUS_SETS = ("full", "tracking")  # every stimulus of the test per round, or its tracking one alone
PTS_FILL_PASSES = 2  # workload-independent preconditioning: twice the user capacity
FULL_RANDOM = 2  # Worker.data_pattern: random data (PTS: data pattern random)
KiB = 1024
MiB = 1024 * KiB

# the IOPS test's read/write mixes (reads %, the rest writes) and block sizes, in the order a round runs them
IOPS_READS = (0, 5, 35, 50, 65, 95, 100)
IOPS_SIZES = (1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512)
LATENCY_READS = (0, 65, 100)
LATENCY_SIZES = (8 * KiB, 4 * KiB, 512)


@dataclass(frozen=True)
class Variant:
    name: str  # client | enterprise
    letter: str  # C | E, as the specification's report header says it
    active_range_pct: int
    queue_depth: int  # per thread
    threads: int
    write_cache: str  # what the specification asks; Fiometer does not change the device's setting


VARIANT = {
    "client": Variant("client", "C", 75, 16, 2, "enabled"),
    "enterprise": Variant("enterprise", "E", 100, 32, 4, "disabled"),
}


@dataclass(frozen=True)
class Stimulus:
    spec: AccessSpec
    reads: int  # percent
    size: int  # bytes
    random: bool


@dataclass(frozen=True)
class TestDef:
    name: str
    title: str
    stimuli: tuple[Stimulus, ...]
    tracking: int  # index into stimuli: the stimulus whose figure is tracked
    variable: str  # "iops" | "mbps" | "lat_ms": what is tracked
    variable_title: str
    precondition: bool  # workload-independent preconditioning before the rounds
    stops_when_steady: bool  # False: every round runs (WSAT: performance over the data written)
    fixed_load: tuple[int, int] | None = None  # (queue depth, threads) whatever the variant (latency: 1 x 1)


def size_words(size: int) -> str:
    return f"{size / KiB:g} KiB"


def _stimulus(reads: int, size: int, random: bool) -> Stimulus:
    kind = "random" if random else "sequential"
    name = f"PTS {size_words(size)} {kind} R/W {reads}/{100 - reads}"
    line = SpecLine(size, 100, reads, 100 if random else 0, 0, 1, 0, 0)
    return Stimulus(AccessSpec(name, [line], description="SNIA PTS stimulus"), reads, size, random)


def _iops() -> TestDef:
    stimuli = tuple(_stimulus(r, s, True) for r in IOPS_READS for s in IOPS_SIZES)
    track = next(i for i, s in enumerate(stimuli) if s.reads == 0 and s.size == 4 * KiB)
    return TestDef("iops", "IOPS", stimuli, track, "iops", "4 KiB random write IOPS", True, True)


def _throughput() -> TestDef:
    stimuli = (_stimulus(0, 1024 * KiB, False), _stimulus(100, 1024 * KiB, False))
    return TestDef(
        "throughput", "Throughput", stimuli, 0, "mbps", "1024 KiB sequential write MB/s", True, True
    )


def _latency() -> TestDef:
    stimuli = tuple(_stimulus(r, s, True) for r in LATENCY_READS for s in LATENCY_SIZES)
    track = next(i for i, s in enumerate(stimuli) if s.reads == 0 and s.size == 4 * KiB)
    return TestDef(
        "latency",
        "Latency",
        stimuli,
        track,
        "lat_ms",
        "4 KiB random write average latency (ms)",
        True,
        True,
        (1, 1),
    )


def _wsat() -> TestDef:
    return TestDef(
        "wsat",
        "Write Saturation (WSAT)",
        (_stimulus(0, 4 * KiB, True),),
        0,
        "iops",
        "4 KiB random write IOPS",
        False,
        False,
    )


TEST = {t.name: t for t in (_iops(), _throughput(), _latency(), _wsat())}


@dataclass
class PtsSetup:
    """What the user chose for one PTS run (the CLI's options)."""

    target: str  # the raw device
    test: str = "iops"
    variant: str = "enterprise"
    rounds_max: int = 25
    round_time: int = 60  # seconds per stimulus in each round
    purge: str = "none"
    stimulus_set: str = "full"
    precondition_scale: float = 1.0  # of the capacity the preconditioning writes twice (tests scale it)
    tested_by: str = ""
    tags: list[str] = field(default_factory=list)

    @property
    def definition(self) -> TestDef:
        return TEST[self.test]

    @property
    def variant_def(self) -> Variant:
        return VARIANT[self.variant]

    def stimuli(self) -> tuple[Stimulus, ...]:
        d = self.definition
        return d.stimuli if self.stimulus_set == "full" else (d.stimuli[d.tracking],)

    def tracking_index(self) -> int:
        """The tracking stimulus's position among ``stimuli()``."""
        return self.definition.tracking if self.stimulus_set == "full" else 0

    def load(self) -> tuple[int, int]:
        """(queue depth per thread, threads)."""
        v = self.variant_def
        return self.definition.fixed_load or (v.queue_depth, v.threads)


FILL_WORKER, FIRST_THREAD = 0, 1  # the plan's workers: the preconditioning's, then one per thread


def _sectors(nbytes: int, sector: int) -> int:
    """Whole MiB of ``nbytes`` in sectors (every block size divides a MiB), at least one MiB."""
    return max(nbytes // MiB, 1) * MiB // sector


def build_plan(setup: PtsSetup, capacity: int, sector: int) -> Plan:
    """The plan of a PTS run on a device of ``capacity`` bytes and ``sector``-byte logical sectors: worker
    0 writes the preconditioning (``precondition_scale`` of the capacity, twice); workers 1..threads run the
    stimuli over the variant's active range, at its queue depth, with random data."""
    qd, threads = setup.load()
    v = setup.variant_def
    specs = [s.spec for s in setup.stimuli()]
    names = [s.name for s in specs]
    target = Target(setup.target, setup.target)
    fill = Worker(
        "PTS preconditioning",
        queue_depth=32,
        max_size=_sectors(int(capacity * setup.precondition_scale), sector),
        data_pattern=FULL_RANDOM,
        targets=[target],
    )
    workers = [fill] + [
        Worker(
            f"PTS thread {t + 1}",
            queue_depth=qd,
            max_size=_sectors(capacity * v.active_range_pct // 100, sector),
            data_pattern=FULL_RANDOM,
            specs=list(names),
            targets=[Target(setup.target, setup.target)],
        )
        for t in range(threads)
    ]
    d = setup.definition
    test_setup = TestSetup(
        description=f"{PTS_REVISION} {d.title} test, {v.name} ({v.letter})",
        run_time=setup.round_time,
        precondition=Precondition(fill_passes=PTS_FILL_PASSES if d.precondition else 0),
    )
    return Plan(
        name=f"PTS-{v.letter} {d.title}",
        setup=test_setup,
        specs=specs,
        managers=[Manager("local", workers=workers)],
    )

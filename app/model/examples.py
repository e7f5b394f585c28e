"""Bundled example plans: common workloads, each with a one-line description.

Built in code (one source of truth) and offered by the GUI's File > Examples and by
`fiometer examples`. Targets are a single test file named TESTFILE: map it to a path
(``--map TESTFILE=/path/iobw.tst``) or pick a target in the GUI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.model.plan import (
    IDLE,
    AccessSpec,
    Manager,
    Plan,
    Precondition,
    QueueDepthCycling,
    SpecLine,
    Target,
    TestSetup,
    Worker,
)

K = 1024
M = K * K
TESTFILE = "TESTFILE"


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    description: str
    build: Callable[[], Plan]


def _one(size: int, reads: int, random: int, align: int = 0) -> list[SpecLine]:
    return [SpecLine(size, 100, reads, random, 0, 1, align, 0)]


def _plan(
    title: str,
    description: str,
    specs: list[AccessSpec],
    workers: list[Worker],
    run_time: int = 60,
    ramp_up: int = 5,
    **setup: Any,
) -> Plan:
    for w in workers:
        w.targets = w.targets or [Target(TESTFILE)]
        w.max_size = w.max_size or (4 * 1024**3) // 512  # a 4 GiB test file (512-byte sectors)
    return Plan(
        name=title,
        setup=TestSetup(description=description, run_time=run_time, ramp_up=ramp_up, **setup),
        specs=specs,
        managers=[Manager("local", workers=workers)],
    )


def _single(title: str, description: str, spec: AccessSpec, qd: int, **kw: Any) -> Callable[[], Plan]:
    return lambda: _plan(
        title, description, [spec], [Worker("Worker 1", queue_depth=qd, specs=[spec.name])], **kw
    )


def _split(name: str, sizes: list[tuple[int, int]], reads: int, random: int) -> AccessSpec:
    return AccessSpec(name, [SpecLine(s, p, reads, random, 0, 1, 0, 0) for s, p in sizes])


def _crystal() -> Plan:
    specs = [
        AccessSpec("SEQ1M Q8T1 Read", _one(M, 100, 0)),
        AccessSpec("SEQ1M Q8T1 Write", _one(M, 0, 0)),
        AccessSpec("RND4K Q32T1 Read", _one(4 * K, 100, 100, 4 * K)),
        AccessSpec("RND4K Q32T1 Write", _one(4 * K, 0, 100, 4 * K)),
    ]
    # Iometer's queue depth is per worker, so each depth gets its own worker; Idle lets the other wait.
    seq = Worker("SEQ1M Q8", queue_depth=8, specs=[specs[0].name, specs[1].name, IDLE, IDLE])
    rnd = Worker("RND4K Q32", queue_depth=32, specs=[IDLE, IDLE, specs[2].name, specs[3].name])
    return _plan(
        "CrystalDiskMark-like",
        "SEQ1M Q8T1 and RND4K Q32T1, read then write, like CrystalDiskMark's default profile",
        specs,
        [seq, rnd],
        run_time=30,
    )


def _flash() -> Plan:
    specs = [
        AccessSpec("1M random write", _one(M, 0, 100, M)),
        AccessSpec("4k random read", _one(4 * K, 100, 100, 4 * K)),
        AccessSpec("1M random read", _one(M, 100, 100, M)),
        AccessSpec("4k random write", _one(4 * K, 0, 100, 4 * K)),
    ]
    big = [
        Worker(f"1M worker {i + 1}", queue_depth=1, specs=[specs[0].name, IDLE, specs[2].name, IDLE])
        for i in range(4)
    ]
    small = Worker("4k QD64", queue_depth=64, specs=[IDLE, specs[1].name, IDLE, specs[3].name])
    # the vendor guides' advice: write the card through twice first, then measure once it is steady
    return _plan(
        "Flash validation",
        "The four classic flash tests: 1M random write x4 workers, 4k random read at "
        "64 outstanding, 1M random read x4 workers, 4k random write at 64 outstanding; preconditioned "
        "by two sequential fills and 1M random writes until steady (5 rounds of 60 s)",
        specs,
        big + [small],
        precondition=Precondition(fill_passes=2, steady_state=True),
    )


def _orion() -> Plan:
    specs = [
        AccessSpec("Small random 8k read", _one(8 * K, 100, 100, 8 * K)),
        AccessSpec("Large sequential 1M read", _one(M, 100, 0)),
    ]
    return _plan(
        "Orion-style sweep",
        "Small random and large sequential I/O over rising queue depth (1..64): "
        "find the peak small-I/O IOPS and large-I/O MB/s and their load point",
        specs,
        [Worker("Worker 1", specs=[s.name for s in specs])],
        run_time=30,
        test_type="CYCLE_OUTSTANDING_IOS",
        queue_depth_cycling=QueueDepthCycling(1, 64, 2, "EXPONENTIAL"),
    )


def _bs_sweep() -> Plan:
    sizes = [2 * K << i for i in range(10)]  # 2k .. 1M
    specs = [
        AccessSpec(f"{s // K if s < M else s // M}{'k' if s < M else 'M'} random read", _one(s, 100, 100, s))
        for s in sizes
    ]
    return _plan(
        "Block-size sweep",
        "Random reads from 2 KiB to 1 MiB at 16 outstanding I/Os: where IOPS turn into bandwidth",
        specs,
        [Worker("Worker 1", queue_depth=16, specs=[s.name for s in specs])],
        run_time=30,
    )


def _qd1_qd32() -> Plan:
    spec = AccessSpec("4k random read", _one(4 * K, 100, 100, 4 * K))
    return _plan(
        "4k random QD1/QD32",
        "4 KiB random reads at 1 and at 32 outstanding I/Os: latency vs. throughput",
        [spec],
        [Worker("Worker 1", specs=[spec.name])],
        run_time=30,
        test_type="CYCLE_OUTSTANDING_IOS",
        queue_depth_cycling=QueueDepthCycling(1, 32, 31, "LINEAR"),
    )


def _timed_transfer() -> Plan:
    specs = [
        AccessSpec("Sequential write 1M", _one(M, 0, 0)),
        AccessSpec("Sequential read 1M", _one(M, 100, 0)),
    ]
    return _plan(
        "Timed transfer",
        "Write then read 4 GiB sequentially in 1 MiB blocks, one at a time, and time it "
        "(what admins time with dd before and after a change); each step stops after 1 hour at most",
        specs,
        [Worker("Worker 1", queue_depth=1, specs=[s.name for s in specs])],
        run_time=3600,
        ramp_up=0,
        transfer_bytes=4 * 1024**3,
    )


EXAMPLES: list[Example] = [
    Example(
        "oltp",
        "Database OLTP",
        "8 KiB random, 70% read / 30% write, 32 outstanding I/Os (OLTP database)",
        _single(
            "Database OLTP",
            "8 KiB random 70/30 at QD 32",
            AccessSpec("OLTP 8k 70/30", _one(8 * K, 70, 100)),
            32,
        ),
    ),
    Example(
        "fileserver",
        "File server",
        "Intel's file server pattern: 512 B..64 KiB, 80% read, random, QD 16",
        _single(
            "File server",
            "Intel file server pattern",
            _split(
                "Fileserver pattern (Intel)",
                [
                    (512, 10),
                    (K, 5),
                    (2 * K, 5),
                    (4 * K, 60),
                    (8 * K, 2),
                    (16 * K, 4),
                    (32 * K, 4),
                    (64 * K, 10),
                ],
                80,
                100,
            ),
            16,
        ),
    ),
    Example(
        "webserver",
        "Web server",
        "Web server pattern: 512 B..512 KiB, 100% read, random, QD 16",
        _single(
            "Web server",
            "Web server pattern",
            _split(
                "Webserver pattern",
                [
                    (512, 22),
                    (K, 15),
                    (2 * K, 8),
                    (4 * K, 23),
                    (8 * K, 15),
                    (16 * K, 2),
                    (32 * K, 6),
                    (65 * K, 7),
                    (128 * K, 1),
                    (512 * K, 1),
                ],
                100,
                100,
            ),
            16,
        ),
    ),
    Example(
        "backup",
        "Sequential backup",
        "1 MiB sequential reads at QD 8 (a backup reading its source)",
        _single(
            "Sequential backup", "1 MiB sequential read", AccessSpec("Backup 1M seq read", _one(M, 100, 0)), 8
        ),
    ),
    Example("qd1qd32", "4k random QD1/QD32", "4 KiB random reads at queue depth 1 and 32", _qd1_qd32),
    Example("crystal", "CrystalDiskMark-like", "SEQ1M Q8T1 and RND4K Q32T1, read and write", _crystal),
    Example(
        "flash",
        "Flash validation (4 tests)",
        "1M rand write x4, 4k rand read QD64, 1M rand read x4, 4k rand write QD64",
        _flash,
    ),
    Example("orion", "Orion-style sweep", "8 KiB random and 1 MiB sequential reads over QD 1..64", _orion),
    Example("bssweep", "Block-size sweep", "Random reads 2 KiB..1 MiB at QD 16", _bs_sweep),
    Example(
        "timed",
        "Timed transfer (dd-style)",
        "Write then read 4 GiB sequentially and report the elapsed time",
        _timed_transfer,
    ),
]


def example(key: str) -> Plan:
    for ex in EXAMPLES:
        if ex.key == key:
            return ex.build()
    raise KeyError(f"no example {key!r}; choose one of {', '.join(e.key for e in EXAMPLES)}")

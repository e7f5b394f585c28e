"""What a run is told beyond its plan: overrides for quick checks, the writes armed, and how it is spread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.engine.common.phase_bounds import DEFAULT as DEFAULT_BOUNDS
from app.engine.common.phase_bounds import Bounds
from app.engine.devices.linux_devices import ObjectId
from app.engine.guards.safety import CreatedFiles
from app.engine.jobs.sequence import Step


@dataclass
class RunOptions:
    run_time: int | None = None  # override every step's run time (quick checks)
    ramp_up: int | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    status_interval: float = 1.0
    engine: str | None = None  # override the ioengine (e.g. "null" in tests)
    default_file_size: int | None = None
    file_size: int | None = None  # override the size of every test file (quick checks)
    allow_write: set[str] = field(default_factory=set)  # armed targets (names or paths)
    allow_write_in_use: set[str] = field(default_factory=set)  # second override: mounted/partitioned
    # plain fio --server managers (name, host:port or host) armed for writes Fiometer cannot verify there
    allow_unverified: set[str] = field(default_factory=set)
    registry: CreatedFiles | None = None  # test files Fiometer created (None: nothing is known)
    # path -> the object (placement.object_id) the user was shown when arming it (GUI): the run refuses to
    # start if that path now leads to anything else
    armed_objects: dict[str, ObjectId] = field(default_factory=dict)
    # path -> what the loop device shown was bound to (None: no loop device), compared as armed_objects
    armed_backings: dict[str, ObjectId | None] = field(default_factory=dict)
    # called with each step after its targets were checked and opened, right before fio starts (tests
    # drive races through it)
    before_fio_start: Callable[[Step], None] | None = None
    # steps with at least this many fio servers read and decode them in another process (0: never)
    decode_apart: int = 1
    # fio servers per such process: more servers spread over more processes (each its own pipe and lock)
    hosts_per_process: int = 16
    # a window's run with at least this many remote managers runs in a process of its own (app.run_apart;
    # 0: never): the runner's and the store's work then leaves the window's process
    run_apart: int = 8
    # how long each phase of a step may take (app.engine.common.phase_bounds; tests scale it down)
    bounds: Bounds = DEFAULT_BOUNDS

"""fio job text for one test step on one manager (docs/design.md, "Mapping Iometer to fio").

One job section per (worker, target), because Iometer's outstanding I/Os are per target. Job names
are ``m<manager#>.w<worker#>.t<target#>`` (1-based positions in the plan), unique across a step;
telemetry rolls them up by worker key ``w<worker#>`` and target key ``w<worker#>.t<target#>``.
The OS decides the engine (libaio / windowsaio + thread / posixaio) and target names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from app.engine.jobs import geometry, network_jobs
from app.engine.jobs import targets as T
from app.engine.jobs.network_jobs import LOOPBACK
from app.engine.jobs.placement import Placement, place_remote
from app.engine.jobs.sequence import FILL, STEADY, Step
from app.engine.jobs.specmap import fixed_transfers, spec_options
from app.model.plan import DEFAULT_TEST_FILE_SIZE, PRECONDITION_FILL, AccessSpec, Plan, SpecLine, Worker

DEFAULT_FILE_SIZE = DEFAULT_TEST_FILE_SIZE
UNTIL_STOPPED = 365 * 24 * 3600  # Iometer run time 0:0:0 = until Stop

ENGINE_BY_OS = {T.LINUX: "libaio", T.WINDOWS: "windowsaio", T.MACOS: "posixaio"}
# Iometer data patterns 0 (repeating bytes), 1 (pseudo random, reused), 2 (full random per write)
DATA_PATTERN_OPTIONS: dict[int, list[tuple[str, str]]] = {
    0: [("buffer_pattern", "0xa5")],
    1: [("refill_buffers", "0"), ("scramble_buffers", "0")],
    2: [("refill_buffers", "1")],
}


# A precondition fill: 128 KiB sequential writes, as the SNIA test specification fills a device.
FILL_SPEC = AccessSpec(PRECONDITION_FILL, [SpecLine(128 * 1024, 100, 0, 0, 0, 1, 0, 0)])


def target_key(worker_pos: int, target_pos: int) -> str:
    return f"w{worker_pos + 1}.t{target_pos + 1}"


def job_name(manager_pos: int, worker_pos: int, target_pos: int) -> str:
    return f"m{manager_pos + 1}.{target_key(worker_pos, target_pos)}"


def worker_key(worker_pos: int) -> str:
    return f"w{worker_pos + 1}"


def client_worker_key(server_manager_pos: int, worker_pos: int) -> str:
    """Iometer's client worker, on a partner manager, of network worker ``worker_pos`` of manager
    ``server_manager_pos`` (its results are filed under the partner)."""
    return f"n{server_manager_pos + 1}.{worker_key(worker_pos)}"


def client_workers(plan: Plan) -> list[tuple[int, str, str]]:
    """Every client worker a run of ``plan`` may report: (partner manager index, key, name)."""
    out: dict[tuple[int, str], str] = {}
    for mi, m in enumerate(plan.managers):
        for wi, w in enumerate(m.workers):
            if w.kind == "network_tcp":
                for ti in range(len(w.targets)):
                    out[(network_jobs.partner_index(plan, mi, w, ti), client_worker_key(mi, wi))] = (
                        f"[{w.name}]"
                    )
    return [(pi, key, name) for (pi, key), name in out.items()]


@dataclass
class JobInfo:
    """What one fio job section stands for, to label and roll up its numbers."""

    name: str  # fio job name, e.g. "m1.w1.t2"
    manager: str
    worker_key: str  # "w1"
    worker_name: str
    target_key: str  # "w1.t2"
    target_name: str
    path: str
    is_device: bool
    spec: str
    queue_depth: int
    size: int | None = None  # bytes of the target fio uses (None: the whole device)
    offset: int = (
        0  # bytes before the first I/O (Iometer's starting sector); fio lays files out to offset+size
    )
    placement: Placement | None = None  # what fio will open, as examined (or normalised, on remote managers)
    writes: bool = True  # the job's own spec (incl. a preconditioning fill) has a line below 100 % reads
    network: bool = False  # a TCP connection of a network worker (path: tcp://address:port), not storage;
    # its ``writes``: it sends
    transfers: tuple[int | None, int | None] = (None, None)  # (read, write) bytes of every I/O where the
    # spec has one size for that direction (specmap.fixed_transfers): telemetry's completed-I/O count

    def names(self) -> set[str]:
        """Every name the user may arm this target by: the plan's name, the path as spelled and as resolved."""
        return {self.target_name, self.path} | (self.placement.names() if self.placement else set())


@dataclass
class JobFile:
    manager: str
    text: str
    jobs: list[JobInfo] = field(default_factory=list)
    run_time: int = 0  # seconds per step as written (runtime=; UNTIL_STOPPED for Iometer's 0)
    ramp_up: int = 0
    tail_s: int = 0  # how much longer than run_time a job may run: a network receiver outlasting its sender

    @property
    def step_seconds(self) -> int:
        """How long the step runs (ramp-up + run time), 0 when it runs until Stop. The one home of step
        timing: progress displays read it here, from what fio is told, never from the plan and options."""
        return 0 if self.run_time >= UNTIL_STOPPED else self.run_time + self.ramp_up


def _line(key: str, value: str | None = None) -> str:
    return key if value is None else f"{key}={value}"


def _comment(text: str) -> str:
    """A one-line job-file comment: names from a plan can never start a new line (and so an option)."""
    return "; " + "".join(c if c.isprintable() else "?" for c in text)


def target_geometry(where: T.ResolvedTarget, placed: Placement | None, os_name: str) -> geometry.Geometry:
    """Iometer's geometry of the object a target resolves to: as examined on its manager (``placement``),
    else what its path says (a plain fio server: nothing can be examined there)."""
    examined = placed.geometry() if placed is not None else None
    if examined is not None:
        return examined
    return geometry.assumed(
        where.is_device or (placed is not None and placed.is_device), T.normalize_os(os_name)
    )


def target_region(
    worker: Worker,
    where: T.ResolvedTarget,
    placed: Placement | None,
    os_name: str,
    *,
    default_file_size: int = DEFAULT_FILE_SIZE,
    file_size: int | None = None,
) -> tuple[int | None, int, geometry.Geometry]:
    """(fio size= (None: the whole device), fio offset=, geometry) of a worker's target: its Maximum Disk Size
    and Starting Sector in the object's sectors (``geometry.region``); ``file_size`` overrides the size of
    test files, for quick checks."""
    geo = target_geometry(where, placed, os_name)
    is_device = where.is_device or (placed is not None and placed.is_device)
    existing = placed.size if placed is not None and placed.exists and not is_device else None
    size, offset = geometry.region(
        worker.max_size,
        worker.start_sector,
        geo,
        is_device=is_device,
        existing_size=existing,
        default_file_size=default_file_size,
    )
    if file_size and not is_device:
        size = file_size
    return size, offset, geo


@dataclass(frozen=True)
class JobSettings:
    """How a step's job files are written, beyond the plan: the run's overrides and where its targets are.

    ``mapping``: target name -> path (the run's one carrier of the mapping; ``targets.resolve``).
    ``place`` finds the object fio will open (placement.placer; None: normalised by text, as for a
    remote manager). ``allow_mounted`` says which device jobs were armed twice: only those get fio's
    allow_mounted_write. ``file_size`` overrides the size of test files (not devices), for quick checks.
    ``engine``: fio's ioengine (None: the OS's usual one), ``engine_options`` the io_uring options with it.
    ``peer_addresses``: manager name -> the address other managers reach it at, for network workers
    (default loopback), whose ports start at ``net_port_base``."""

    mapping: dict[str, str] | None = None
    run_time: int | None = None
    ramp_up: int | None = None
    engine: str | None = None
    engine_options: tuple[str, ...] = ()
    default_file_size: int = DEFAULT_FILE_SIZE
    file_size: int | None = None
    title: str = ""
    peer_addresses: dict[str, str] | None = None
    net_port_base: int = network_jobs.BASE_PORT
    place: Callable[[str], Placement] | None = None
    allow_mounted: Callable[[JobInfo], bool] | None = None


def step_jobfile(
    plan: Plan, step: Step, manager_index: int, os_name: str, settings: JobSettings | None = None
) -> JobFile:
    """The job file for one manager in one step (written as ``settings`` say). Raises targets.TargetError for
    unplaceable targets."""
    s = settings or JobSettings()
    mapping, place, allow_mounted = s.mapping, s.place, s.allow_mounted
    os_name = T.normalize_os(os_name)
    if place is None:

        def place(path: str) -> Placement:
            return place_remote(path, T.is_device_path(path), os_name, manager.name)

    manager = plan.managers[manager_index]
    transfer, run, ramp = _phase_limits(plan, step, s.run_time, s.ramp_up)
    out = _global_lines(
        plan, step, manager.name, os_name, (s.engine, s.engine_options), s.title, transfer, run, ramp
    )
    loops = plan.setup.precondition.fill_passes if step.phase == FILL else None
    jf = JobFile(manager.name, "", run_time=run or UNTIL_STOPPED, ramp_up=ramp)
    for active in step.for_manager(manager_index):
        worker = manager.workers[active.worker]
        if worker.kind == "network_tcp":
            continue  # its jobs follow, with its partners'
        spec = FILL_SPEC if step.phase == FILL else plan.spec(active.spec)
        if spec is None:
            raise ValueError(f"worker {worker.name!r} is assigned spec {active.spec!r}, which the plan lacks")
        for tpos in active.targets:
            target = worker.targets[tpos]
            where = T.resolve(target, os_name, mapping)
            placed = place(where.path)
            if placed.is_device and not where.is_device:  # a link to a device, found by its file type
                where = T.ResolvedTarget(where.path, True, T.DEVICE_SECTOR)
            size, offset, geo = target_region(
                worker, where, placed, os_name, default_file_size=s.default_file_size, file_size=s.file_size
            )
            job = JobInfo(
                job_name(manager_index, active.worker, tpos),
                manager.name,
                worker_key(active.worker),
                worker.name,
                target_key(active.worker, tpos),
                target.name,
                placed.path,
                placed.is_device,
                spec.name,
                active.queue_depth,
                size,
                offset,
                placed,
                any(line.reads < 100 for line in spec.lines),
                transfers=fixed_transfers(spec),
            )
            jf.jobs.append(job)
            armed = placed.is_device and allow_mounted is not None and allow_mounted(job)
            out += _target_lines(job, worker, spec, geo.align, transfer, loops, armed)
    out += _network_sections(plan, step, manager_index, jf, s.peer_addresses or {}, s.net_port_base)
    jf.text = "\n".join(out) + "\n"
    return jf


def _phase_limits(plan: Plan, step: Step, run_time: int | None, ramp_up: int | None) -> tuple[int, int, int]:
    """(transfer bytes, run time, ramp-up) of the step: the plan's (or the caller's times), except that a
    fill and a steady-state phase transfer no fixed amount and have no ramp-up."""
    run = plan.setup.run_time if run_time is None else run_time
    ramp = plan.setup.ramp_up if ramp_up is None else ramp_up
    if step.phase == FILL:  # every target written pass after pass, then the step ends
        return 0, UNTIL_STOPPED, 0
    if step.phase == STEADY:  # the runner ends it once the IOPS are steady (app.model.steady_state)
        return 0, plan.setup.precondition.max_s, 0
    return plan.setup.transfer_bytes, run, ramp


def _global_lines(
    plan: Plan,
    step: Step,
    manager_name: str,
    os_name: str,
    engine: tuple[str | None, tuple[str, ...]],
    title: str,
    transfer: int,
    run: int,
    ramp: int,
) -> list[str]:
    """The job file's head and its [global] section. ``engine``: (ioengine, or None for the OS's usual one;
    the io_uring options, written only with io_uring)."""
    name = engine[0] or ENGINE_BY_OS[os_name]
    out = [
        _comment(f"Fiometer job file{': ' + title if title else ''}"),
        _comment(f"manager {manager_name!r}, step {step.index + 1}: {step.spec_label}"),
        "[global]",
        _line("ioengine", name),
        *(engine[1] if name == "io_uring" else ()),
    ]
    if os_name == T.WINDOWS:
        out.append("thread")  # fio on Windows only supports threads; say so to avoid its warning
    out += [_line("direct", "1" if plan.setup.direct_io else "0")] + (
        [] if transfer or step.phase == FILL else [_line("time_based", "1")]
    )
    out.append(_line("runtime", str(run or UNTIL_STOPPED)))  # with a transfer: its upper limit
    if ramp:
        out.append(_line("ramp_time", str(ramp)))
    # total-latency histogram (Iometer's response time) only: the completion one would double fio's output
    out += [
        _line("norandommap", "1"),
        _line("continue_on_error", "io"),
        _line("lat_percentiles", "1"),
        _line("clat_percentiles", "0"),
    ]
    return out


def _target_lines(
    job: JobInfo,
    worker: Worker,
    spec: AccessSpec,
    align_zero: int,
    transfer: int,
    loops: int | None,
    armed: bool,
) -> list[str]:
    """One target's job section. ``loops``: a fill's passes (None: not a fill); ``armed``: a device armed
    twice, which gets fio's allow_mounted_write; ``align_zero``: the bytes an "align 0" line aligns to."""
    out = [
        "",
        _comment(f"worker {worker.name!r} -> target {job.target_name!r}"),
        f"[{job.name}]",
        _line("filename", T.fio_filename(job.path)),
    ]
    if job.size is not None:
        out.append(_line("size", str(job.size)))
    if job.offset:
        out.append(_line("offset", str(job.offset)))
    if transfer:
        out.append(_line("io_size", str(transfer)))
    if loops is not None:
        out.append(_line("loops", str(loops)))
    if armed:
        out.append(_line("allow_mounted_write", "1"))
    out.append(_line("iodepth", str(job.queue_depth)))
    out += [_line(k, v) for k, v in spec_options(spec, align_zero)]
    if worker.fixed_seed is None:
        out.append(_line("randrepeat", "0"))
    else:
        out += [_line("randrepeat", "1"), _line("randseed", str(worker.fixed_seed))]
    out += [_line(k, v) for k, v in DATA_PATTERN_OPTIONS.get(worker.data_pattern, [])]
    return out


def stop_order(files: dict[str, JobFile]) -> tuple[set[str], set[str]]:
    """(first, later): managers to stop first on Stop — those sending over the network — and those to stop
    once they have ended — receiving only. fio's TCP sender whose receiver closed first never ends (see
    app.engine.jobs.network_jobs). Empty sets when the step has no network receivers."""
    sends = {n for n, jf in files.items() if any(j.network and j.writes for j in jf.jobs)}
    receives = {n for n, jf in files.items() if any(j.network and not j.writes for j in jf.jobs)} - sends
    return (sends, receives) if sends and receives else (set(), set())


def _network_sections(
    plan: Plan, step: Step, manager_index: int, jf: JobFile, addresses: dict[str, str], port_base: int
) -> list[str]:
    """This manager's side of every network pair in the step: the listening receiver or the connecting sender
    (the server worker's job, or Iometer's client worker for it on the partner manager)."""
    out: list[str] = []
    for pair in network_jobs.pairs(plan, step.workers, port_base):
        server = plan.managers[pair.server]
        worker = server.workers[pair.worker]
        target = worker.targets[pair.target]
        address = addresses.get(plan.managers[pair.receiver].name, LOOPBACK)  # where the listener is reached
        for server_side, mi in ((True, pair.server), (False, pair.client)):
            if mi != manager_index:
                continue
            if server_side:
                name, wkey, wname = (
                    job_name(mi, pair.worker, pair.target),
                    worker_key(pair.worker),
                    worker.name,
                )
                tkey = target_key(pair.worker, pair.target)
            else:  # Iometer's client worker on the partner manager, shown as "[server worker]"
                wkey = client_worker_key(pair.server, pair.worker)
                name, wname, tkey = f"m{mi + 1}.{wkey}.t{pair.target + 1}", f"[{worker.name}]", f"{wkey}.t1"
            receives = mi == pair.receiver
            jf.jobs.append(
                JobInfo(
                    name,
                    plan.managers[mi].name,
                    wkey,
                    wname,
                    tkey,
                    target.name,
                    f"tcp://{address}:{pair.port}",
                    False,
                    pair.spec.name,
                    1,
                    None,
                    writes=not receives,
                    network=True,
                )
            )
            if receives and jf.run_time < UNTIL_STOPPED:
                jf.tail_s = network_jobs.RECEIVER_TAIL_S
            out += [
                "",
                _comment(
                    f"network worker {worker.name!r} ({'server' if server_side else 'client'}, "
                    f"{'receives' if receives else 'sends'}) -> {target.name!r}"
                ),
                f"[{name}]",
            ]
            out += [
                _line(k, v)
                for k, v in network_jobs.job_options(
                    pair, server_side=server_side, listener_address=address, run_time=jf.run_time
                )
            ]
    return out


def target_paths(jobfiles: Iterable[Mapping[str, JobFile]]) -> dict[tuple[str, str], str]:
    """(manager, target key) -> the path of that target as the plan or the run's mapping gave it
    (``Placement.spelled``: before links were followed), from job files (per step, by manager); network
    connections are not targets on disk and are left out."""
    out: dict[tuple[str, str], str] = {}
    for files in jobfiles:
        for jf in files.values():
            for j in jf.jobs:
                if not j.network:
                    out.setdefault((j.manager, j.target_key), j.placement.spelled if j.placement else j.path)
    return out

"""Validity notes: whether a run's figures measure the storage, each with the figure that says so and what to do.

A note is computed from what fio was told (the stored job text), what fio and the kernel counted (fio's final
output: per-job I/Os and CPU, ``disk_util``), the hosts' facts (memory, CPUs) and the per-second ALL samples;
facts that do not survive the run (how much of a local test file was ever written) are taken when each step
ends (``recording.StoreRecorder``) and passed in. Notes are stored with the run (``runs.host_json``, key
``validity``, see :mod:`app.store.run_extras`) when it ends; a run stored before that gets them computed
when shown, without the facts that only the run could see.

Kinds (``KINDS``): cache, never written, compressible, generator, not steady, other traffic, clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from app.analysis.fio_json import fio_document
from app.model.plan import Precondition
from app.model.steady_state import first_steady_window, judge, rounds_of
from app.store.records import Run, StepInfo

CACHE, NEVER_WRITTEN, COMPRESSIBLE, GENERATOR, NOT_STEADY, OTHER_TRAFFIC, CLOCK = (
    "cache",
    "never_written",
    "compressible",
    "generator",
    "not_steady",
    "other_traffic",
    "clock",
)
KINDS = (CACHE, NEVER_WRITTEN, COMPRESSIBLE, GENERATOR, NOT_STEADY, OTHER_TRAFFIC, CLOCK)
TITLES = {
    CACHE: "Cache",
    NEVER_WRITTEN: "Never-written data",
    COMPRESSIBLE: "Compressible data",
    GENERATOR: "Generator bottleneck",
    NOT_STEADY: "Not steady",
    OTHER_TRAFFIC: "Other traffic",
    CLOCK: "Host clock",
}

# The thresholds, in one place.
RAM_MULTIPLE = 3.0  # a buffered test region smaller than this many times the host's RAM can sit in its cache
UNSEEN_SHARE = 0.25  # share of fio's reads the disk did not see before it is worth saying
MIN_READS = 200  # fewer reads than this say nothing about the disk's counts
DISK_UTIL_S = 0.25  # fio updates its disk counters this often: the last update may miss that long of I/O
UNWRITTEN_SHARE = 0.10  # share of a read region never written (holes) before it is worth saying
CPU_CORE_PCT = 85.0  # a job's CPU (user + system, % of one core) that means the generator is the limit
HOST_CPU_PCT = 90.0  # all jobs' CPU against the host's cores, or the host's own busy share
FIO_SHARE_PCT = 20.0  # fio's jobs' CPU (% of a core) before a busy host is blamed on the generator
IDLE_UTIL_PCT = 50.0  # a disk busier than this is not idle waiting for the generator
EXTRA_SHARE = 0.25  # disk I/Os beyond fio's (scaled to the disk's window) before they are other traffic
MIN_EXTRA_PER_S = 20.0
MIN_EXTRA_BYTES_PER_S = 20.0 * 4096  # the same, in bytes: 20 small I/Os a second
SPLIT_FREE = 128 * 1024  # no Linux disk splits a request this size (max_sectors_kb is at least 128)
CLOCK_SKEW_S = 1.0  # one sample interval: beyond it a host's per-second rows and start times disagree
STEADY_ROUNDS = 5  # a step's per-second IOPS in this many rounds, judged by the preconditioning rule
MIN_ROUND_S = 2  # seconds: shorter rounds hold one interval each (its jitter, not a trend)
IGNORING_DIRECT = {
    "tmpfs": "a memory file system",
    "ramfs": "a memory file system",
    "zfs": "ZFS (before 2.3 it ignores O_DIRECT and serves reads from its ARC)",
}


@dataclass(frozen=True)
class Note:
    kind: str
    text: str  # what, with the figure that triggered it
    advice: str  # what to do
    figure: str = ""  # the figure alone, e.g. "93 % of 120,000 reads"
    step: int | None = None  # 0-based step index; None for the whole run
    manager: str | None = None

    @property
    def title(self) -> str:
        return TITLES.get(self.kind, self.kind)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Note:
        return cls(
            str(d.get("kind", "")),
            str(d.get("text", "")),
            str(d.get("advice", "")),
            str(d.get("figure", "")),
            d.get("step") if isinstance(d.get("step"), int) else None,
            d.get("manager") if isinstance(d.get("manager"), str) else None,
        )


@dataclass
class JobOptions:
    name: str
    options: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    @property
    def rw(self) -> str:
        return self.options.get("rw", "read")

    @property
    def reads(self) -> bool:
        rw = self.rw
        return "read" in rw or rw in ("rw", "randrw") and self.options.get("rwmixread", "50") != "0"

    @property
    def writes(self) -> bool:
        rw = self.rw
        return (
            "write" in rw or rw in ("rw", "randrw", "trim") and self.options.get("rwmixread", "50") != "100"
        )

    @property
    def direct(self) -> bool:
        return self.options.get("direct", "0") not in ("0", "false")

    @property
    def network(self) -> bool:
        return self.options.get("ioengine") == "net"


def parse_jobs(text: str) -> list[JobOptions]:
    """Each job section of a fio job file with [global]'s options merged in."""
    glob: dict[str, str] = {}
    jobs: list[JobOptions] = []
    current: dict[str, str] | None = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1]
            if name == "global":
                current = glob
            else:
                jobs.append(JobOptions(name, {}))
                current = jobs[-1].options
            continue
        key, _, value = line.partition("=")
        if current is not None:
            current[key.strip()] = value.strip() if _ else "1"
    for j in jobs:
        j.options = {**glob, **j.options}
    return jobs


def _output(raw: str | None) -> dict[str, Any]:
    return fio_document(raw) or {}


def _fio_jobs(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    jobs = doc.get("jobs") or doc.get("client_stats") or []
    return {
        str(j.get("jobname")): j for j in jobs if isinstance(j, dict) and j.get("jobname") != "All clients"
    }


def _ios(job: Mapping[str, Any], direction: str) -> int:
    d = job.get(direction)
    return int(d.get("total_ios") or 0) if isinstance(d, dict) else 0


def _size(value: str | None) -> int | None:
    if not value:
        return None
    from app.model.units import parse_size

    return parse_size(value)


def _fmt_bytes(n: float) -> str:
    from app.model.units import format_bytes

    return format_bytes(int(n))


def _memory(run: Run, manager: str) -> int | None:
    host = run.host if isinstance(run.host, dict) else {}
    facts = (host.get("managers") or {}).get(manager) if isinstance(host.get("managers"), dict) else None
    mem = (facts or {}).get("memory_bytes") if isinstance(facts, dict) else None
    return int(mem) if isinstance(mem, (int, float)) and mem > 0 else None


def _cpus(run: Run, manager: str) -> int | None:
    host = run.host if isinstance(run.host, dict) else {}
    facts = (host.get("managers") or {}).get(manager) if isinstance(host.get("managers"), dict) else None
    cpus = (facts or {}).get("cpus") if isinstance(facts, dict) else None
    return int(cpus) if isinstance(cpus, int) and cpus > 0 else None


def _target_details(run: Run, manager: str, job_name: str) -> dict[str, Any]:
    """A job ``m1.w1.t2``'s target details (disk, environment) recorded for the run."""
    key = job_name.split(".", 1)[1] if "." in job_name else job_name
    for t in run.targets:
        if t.manager == manager and t.key == key:
            return t.details if isinstance(t.details, dict) else {}
    return {}


# ---------------------------------------------------------------------------------------------------------------
# The rules, one step and manager at a time


@dataclass
class StepFacts:
    """What one step on one manager gives the rules."""

    run: Run
    step: StepInfo
    manager: str
    jobs: list[JobOptions]
    doc: dict[str, Any]
    allocation: dict[str, tuple[int, int]]  # job name -> (bytes ever written, bytes of the region read)
    host_cpu_pct: float | None = None  # all processes' CPU on the manager's host during the step (local only)

    @property
    def fio_jobs(self) -> dict[str, dict[str, Any]]:
        return _fio_jobs(self.doc)

    def disks(self) -> list[dict[str, Any]]:
        return [d for d in self.doc.get("disk_util") or [] if isinstance(d, dict) and "name" in d]

    def reads(self, jobs: Iterable[JobOptions]) -> int:
        fj = self.fio_jobs
        return sum(_ios(fj.get(j.name, {}), "read") for j in jobs)

    def writes(self, jobs: Iterable[JobOptions]) -> int:
        fj = self.fio_jobs
        return sum(_ios(fj.get(j.name, {}), "write") for j in jobs)

    def window_s(self) -> float:
        runtimes = [float(j.get("job_runtime") or 0) for j in self.fio_jobs.values()]
        return max(runtimes, default=0.0) / 1000.0 + float(self.step.ramp_s or 0)

    def disk_of(self, job: JobOptions) -> str | None:
        disk = _target_details(self.run, self.manager, job.name).get("disk")
        if disk:
            return str(disk)
        disks = self.disks()
        return str(disks[0]["name"]) if len(disks) == 1 else None


def _note(kind: str, f: StepFacts, text: str, advice: str, figure: str) -> Note:
    return Note(kind, text, advice, figure, f.step.index, f.manager)


def _unseen_reads(f: StepFacts, jobs: list[JobOptions]) -> tuple[int, int] | None:
    """(fio's reads, the disk's reads incl. merges) for reading jobs on disks fio reported, when measurable."""
    by_disk = {str(d["name"]): d for d in f.disks()}
    fio_reads = disk_reads = 0
    seen: set[str] = set()
    for j in jobs:
        disk = f.disk_of(j)
        if disk is None or disk not in by_disk:
            continue
        fio_reads += f.reads([j])
        if disk not in seen:
            seen.add(disk)
            d = by_disk[disk]
            disk_reads += int(d.get("read_ios") or 0) + int(d.get("read_merges") or 0)
    if not seen or fio_reads < MIN_READS:
        return None
    return fio_reads, disk_reads


def cache_notes(f: StepFacts) -> list[Note]:
    out: list[Note] = _buffered_write_notes(f)
    reading = [j for j in f.jobs if j.reads and not j.network]
    if not reading:
        return out
    buffered = [j for j in reading if not j.direct]
    memory = _memory(f.run, f.manager)
    if buffered:
        region = sum(_size(j.get("size")) or 0 for j in buffered)
        if memory and region and region < RAM_MULTIPLE * memory:
            figure = f"{_fmt_bytes(region)} test region, host RAM {_fmt_bytes(memory)}"
            out.append(
                _note(
                    CACHE,
                    f,
                    f"buffered reads (direct=0) of a {figure}: reads are likely served from "
                    "memory, not the disk",
                    "use direct I/O, or a test region several times larger "
                    f"than the host's RAM (over {_fmt_bytes(RAM_MULTIPLE * memory)})",
                    figure,
                )
            )
        elif not memory:
            figure = f"{_fmt_bytes(region)} read with direct=0" if region else "direct=0"
            out.append(
                _note(
                    CACHE,
                    f,
                    f"buffered reads ({figure}); the host's memory is unknown, so the "
                    "reads may come from its cache",
                    "use direct I/O",
                    figure,
                )
            )
    for j in reading:
        fs = (_target_details(f.run, f.manager, j.name).get("environment") or {}).get("fs_type")
        if j.direct and fs in IGNORING_DIRECT:
            figure = f"{j.get('filename')} on {fs}"
            out.append(
                _note(
                    CACHE,
                    f,
                    f"the test file is on {IGNORING_DIRECT[fs]} ({figure}): reads may come "
                    "from memory even with direct I/O",
                    "place the test file on the storage under test, or use the raw device",
                    figure,
                )
            )
    counted = _unseen_reads(f, reading)
    if counted:
        fio_reads, disk_reads = counted
        # fio reads the disk's counters every 250 ms, and I/Os still queued at the end complete after the last
        # reading: that many reads may be missing from the disk's count without anything being cached
        runtime = max((float(j.get("job_runtime") or 0) for j in f.fio_jobs.values()), default=0.0) / 1000.0
        in_flight = sum(int(j.get("iodepth") or 1) for j in reading)
        allowance = in_flight + (fio_reads / runtime * DISK_UTIL_S if runtime > 0 else 0.0)
        unseen = max(0.0, fio_reads - disk_reads - allowance) / fio_reads if fio_reads else 0.0
        holes = any(_unwritten_share(f, j) >= UNWRITTEN_SHARE for j in reading)
        if unseen >= UNSEEN_SHARE and not holes:
            figure = (
                f"{unseen * 100:.0f} % of fio's {fio_reads:,} reads not seen by the disk ({disk_reads:,})"
            )
            out.append(
                _note(
                    CACHE,
                    f,
                    f"{figure}: they were served from a cache (or by the file system without I/O)",
                    "use direct I/O and a test region larger than every cache in the path; "
                    "on arrays, a region larger than the array's cache",
                    figure,
                )
            )
    return out


def _buffered_write_notes(f: StepFacts) -> list[Note]:
    """Buffered writes land in the page cache and reach the disk later (write-back)."""
    writing = [j for j in f.jobs if j.writes and not j.network and not j.direct]
    memory = _memory(f.run, f.manager)
    region = sum(_size(j.get("size")) or 0 for j in writing)
    if not writing or (memory and region >= RAM_MULTIPLE * memory):
        return []
    figure = (
        f"{_fmt_bytes(region)} test region, host RAM {_fmt_bytes(memory)}"
        if memory and region
        else "direct=0"
    )
    return [
        _note(
            CACHE,
            f,
            f"buffered writes (direct=0) of a {figure}: they complete in memory and reach the "
            "disk later, so the figures are the page cache's",
            "use direct I/O",
            figure,
        )
    ]


def _unwritten_share(f: StepFacts, j: JobOptions) -> float:
    written, region = f.allocation.get(j.name, (0, 0))
    return 1.0 - written / region if region else 0.0


def never_written_notes(f: StepFacts) -> list[Note]:
    out = []
    for j in f.jobs:
        if not j.reads or j.network or j.name not in f.allocation:
            continue
        written, region = f.allocation[j.name]
        share = _unwritten_share(f, j)
        if share >= UNWRITTEN_SHARE:
            figure = f"{share * 100:.0f} % of the {_fmt_bytes(region)} region read was never written"
            out.append(
                _note(
                    NEVER_WRITTEN,
                    f,
                    f"{figure} ({j.get('filename')} is sparse): the file system "
                    "returns zeros for it without reading the disk",
                    "fill the target first "
                    "(Test Setup: Preconditioning, fill passes) or run a write test over it before "
                    "reading",
                    figure,
                )
            )
    return out


def _write_pattern(j: JobOptions) -> tuple[str, str] | None:
    """(what the written data is, how it shrinks) for a compressible or deduplicable write buffer, else None."""
    o = j.options
    if o.get("zero_buffers") not in (None, "0"):
        return "zero-filled buffers (zero_buffers=1)", "compresses and deduplicates completely"
    pct = o.get("buffer_compress_percentage")
    if pct and pct not in ("0",):
        return f"buffers {pct} % compressible (buffer_compress_percentage={pct})", "compresses"
    dedupe = o.get("dedupe_percentage")
    if dedupe and dedupe != "0":
        return f"{dedupe} % duplicate blocks (dedupe_percentage={dedupe})", "deduplicates"
    if o.get("buffer_pattern") and o.get("refill_buffers", "0") == "0":
        return (
            f"Iometer's repeating-bytes pattern (buffer_pattern={o['buffer_pattern']}: one byte repeated)",
            "compresses and deduplicates completely",
        )
    if o.get("refill_buffers", "0") == "0" and o.get("scramble_buffers") == "0":
        return (
            "Iometer's pseudo-random pattern (one random buffer written again and again: "
            "refill_buffers=0, scramble_buffers=0)",
            "deduplicates",
        )
    return None


def compressible_notes(f: StepFacts) -> list[Note]:
    patterns = {p for j in f.jobs if j.writes and not j.network and (p := _write_pattern(j))}
    out = []
    for what, how in sorted(patterns):
        out.append(
            _note(
                COMPRESSIBLE,
                f,
                f"writes of {what}: on a target that compresses or deduplicates "
                f"(ZFS/btrfs compression, VDO, most arrays, some SSDs) it {how}, so less is written "
                "than the figures say",
                "set the worker's Write I/O Data Pattern to Full random "
                "(fio refill_buffers) unless the data you will store is as compressible",
                what,
            )
        )
    return out


def generator_notes(f: StepFacts) -> list[Note]:
    fj = f.fio_jobs
    if not fj or all(j.network for j in f.jobs):
        return []
    cpu = {name: float(j.get("usr_cpu") or 0) + float(j.get("sys_cpu") or 0) for name, j in fj.items()}
    busiest, top = max(cpu.items(), key=lambda kv: kv[1])
    cores = _cpus(f.run, f.manager)
    total = sum(cpu.values())
    utils = [float(d.get("util") or 0) for d in f.disks()]
    util = max(utils) if utils else None
    if util is not None and util >= IDLE_UTIL_PCT:
        return []
    disk = (
        f"disk %util {util:.0f} %"
        if util is not None
        else "no disk counters (the disk is not what fio waits on)"
    )
    if top >= CPU_CORE_PCT:
        figure = f"fio job {busiest} used {top:.0f} % of a CPU core, {disk}"
    elif cores and total >= HOST_CPU_PCT * cores:
        figure = f"fio's jobs used {total:.0f} % of {cores} cores' {cores * 100} %, {disk}"
    elif f.host_cpu_pct is not None and f.host_cpu_pct >= HOST_CPU_PCT and total >= FIO_SHARE_PCT:
        figure = (
            f"the host's CPUs were {f.host_cpu_pct:.0f} % busy (fio's jobs {total:.0f} % of a core), {disk}"
        )
    else:
        return []
    return [
        _note(
            GENERATOR,
            f,
            f"{figure}: the load generator, not the storage, set the pace",
            "spread the load over more workers (or managers), use a larger block size, or a host with "
            "more free CPU",
            figure,
        )
    ]


def _job_bytes(f: StepFacts, jobs: Iterable[JobOptions], direction: str) -> int:
    fj = f.fio_jobs
    out = 0
    for j in jobs:
        d = fj.get(j.name, {}).get(direction)
        out += int(d.get("io_bytes") or 0) if isinstance(d, dict) else 0
    return out


def _largest_block(jobs: Iterable[JobOptions]) -> int | None:
    """The largest transfer size the jobs ask for; None when not plain (bssplit, bsrange)."""
    sizes = []
    for j in jobs:
        if j.get("bssplit") or j.get("bsrange") or j.get("blocksize_range"):
            return None
        for part in (j.get("bs") or j.get("blocksize") or "4k").split(","):
            size = _size(part.strip()) if part.strip() else None
            if size is None:
                return None
            sizes.append(size)
    return max(sizes, default=None)


def other_traffic_notes(f: StepFacts) -> list[Note]:
    """Bytes the disk moved beyond fio's, rate against rate (the kernel splits a large request into several,
    so counting requests would call a 1 MiB transfer split in two "other traffic"). Where the disk's bytes
    are unknown (fio before 3.36 on a remote host), requests are counted instead, and only for transfers no
    kernel splits (up to SPLIT_FREE bytes)."""
    from app.analysis.disk_stats import rates

    by_disk = {str(d["name"]): d for d in f.disks()}
    window = f.window_s()
    fio_runtime = max((float(j.get("job_runtime") or 0) for j in f.fio_jobs.values()), default=0.0) / 1000.0
    if not by_disk or window <= 0 or fio_runtime <= 0:
        return []
    jobs_on: dict[str, list[JobOptions]] = {}
    for j in f.jobs:
        if j.network:
            continue
        if not j.direct:
            return []  # buffered I/O: readahead and write-back make the disk's counts unlike fio's
        disk = f.disk_of(j)
        if disk in by_disk:
            jobs_on.setdefault(disk, []).append(j)
    out = []
    for disk, jobs in sorted(jobs_on.items()):
        d = by_disk[disk]
        # a file system writes for itself too (its journal; the first write into a freshly allocated file
        # converts extents): on files, only reads fio did not issue are someone else's
        files = any(_on_file(f, j) for j in jobs)
        k = d.get("kernel_window")
        if (
            isinstance(k, dict)
            and "fio_read_bytes" in k  # fio's bytes of all the manager's jobs: all on this disk
            and len(jobs_on) == 1
            and float(k.get("msec") or 0) > 0
        ):
            # the kernel's bytes and fio's over one and the same window (measured I/O only)
            theirs = (
                int(k.get("read_sectors") or 0) + (0 if files else int(k.get("write_sectors") or 0))
            ) * 512
            ours_b = int(k["fio_read_bytes"]) + (0 if files else int(k.get("fio_write_bytes") or 0))
            seconds = float(k["msec"]) / 1000.0
            extra = (theirs - ours_b) / seconds
            if theirs - ours_b > EXTRA_SHARE * max(ours_b, 1) and extra >= MIN_EXTRA_BYTES_PER_S:
                what = "read" if files else "read and written"
                figure = f"disk {disk} {what} {_fmt_bytes(theirs)} while fio moved {_fmt_bytes(ours_b)} on it"
                out.append(_traffic_note(f, figure, f"{extra / 1e6:,.2f} MB/s"))
            continue
        r = rates(d, float(d["msec"]) / 1000.0 if d.get("msec") else window)
        if r.read_bytes is not None and r.write_bytes is not None and r.window_s > 0:
            theirs_bps = (r.read_bytes + (0 if files else r.write_bytes)) / r.window_s
            ours_bps = (
                _job_bytes(f, jobs, "read") + (0 if files else _job_bytes(f, jobs, "write"))
            ) / fio_runtime
            extra = theirs_bps - ours_bps
            if extra > EXTRA_SHARE * max(ours_bps, 1.0) and extra >= MIN_EXTRA_BYTES_PER_S:
                what = "read" if files else "read and written"
                figure = (
                    f"disk {disk} {what} {theirs_bps / 1e6:,.2f} MB/s, fio {ours_bps / 1e6:,.2f} MB/s on it"
                )
                out.append(_traffic_note(f, figure, f"{extra / 1e6:,.2f} MB/s"))
            continue
        largest = _largest_block(jobs)
        if largest is None or largest > SPLIT_FREE:
            continue  # a request count cannot tell a split transfer from someone else's I/O
        counted = (
            ("read_ios", "read_merges") if files else ("read_ios", "write_ios", "read_merges", "write_merges")
        )
        ours = (
            (f.reads(jobs) + (0 if files else f.writes(jobs))) * window / fio_runtime
        )  # ramp-up I/O counts too
        theirs = sum(int(d.get(k) or 0) for k in counted)
        extra_ios = theirs - ours
        if extra_ios > EXTRA_SHARE * max(ours, 1.0) and extra_ios / window >= MIN_EXTRA_PER_S:
            figure = f"disk {disk} counted {theirs:,.0f} I/Os, fio issued about {ours:,.0f}"
            out.append(_traffic_note(f, figure, f"{extra_ios / window:,.0f} I/Os per second"))
    return out


def _traffic_note(f: StepFacts, figure: str, extra: str) -> Note:
    return _note(
        OTHER_TRAFFIC,
        f,
        f"{figure}: {extra} came from something else on the disk",
        "run on a disk nothing else uses (or stop the other "
        "work), and compare runs only when this note is absent from both",
        figure,
    )


def cache_can_serve(run: Run) -> bool:
    """Whether a host's page cache can hold what fio read or wrote: buffered I/O (direct=0) on a region
    smaller than RAM_MULTIPLE times the host's RAM (or its RAM unknown). Direct I/O bypasses it."""
    for step in run.steps:
        for manager, output in step.outputs.items():
            for j in parse_jobs(output.job_text or ""):
                if j.direct or j.network or j.get("ioengine") == "null":
                    continue
                memory = _memory(run, manager)
                region = _size(j.get("size")) or 0
                if not memory or not region or region < RAM_MULTIPLE * memory:
                    return True
    return False


def lays_out_files(run: Run, step: StepInfo) -> bool:
    """Whether fio had a test file to lay out in this step (a raw device, the null engine or a network job
    has none)."""
    for manager, output in step.outputs.items():
        for j in parse_jobs(output.job_text or ""):
            if j.network or j.get("ioengine") == "null":
                continue
            if _on_file(StepFacts(run, step, manager, [], {}, {}), j):
                return True
    return False


def _on_file(f: StepFacts, j: JobOptions) -> bool:
    """Whether the job's target is a file on a file system (not a raw device)."""
    env = _target_details(f.run, f.manager, j.name).get("environment") or {}
    if isinstance(env, dict) and env.get("kind"):
        return env.get("kind") == "file"
    name = j.get("filename") or ""
    return not name.startswith(("/dev/", "\\\\.\\", "/proc/self/fd/"))


def clock_notes(f: StepFacts, local: bool) -> list[Note]:
    """A remote host's clock outside what its job start allows: fio says when the job started (3.36+, by
    the host's own clock), which must lie between the step's start and end by ours."""
    if local:
        return []
    from datetime import datetime

    starts = [float(j.get("job_start") or 0) / 1000.0 for j in f.fio_jobs.values() if j.get("job_start")]
    if not starts or not f.step.started or not f.step.ended:
        return []
    try:
        begin, end = (datetime.fromisoformat(t).timestamp() for t in (f.step.started, f.step.ended))
    except (ValueError, TypeError):
        return []
    start = min(starts)
    offset = start - begin if start < begin else start - end if start > end else 0.0
    if abs(offset) <= CLOCK_SKEW_S:
        return []
    figure = f"{f.manager}'s clock is at least {abs(offset):.1f} s {'behind' if offset < 0 else 'ahead of'} this host's"
    return [
        _note(
            CLOCK,
            f,
            f"{figure} (fio's job start by its clock against the step's start and end by ours): "
            "the hosts' per-second rows and start times do not line up",
            "synchronise the hosts' clocks (NTP/chrony) and run again",
            figure,
        )
    ]


def steady_rounds(samples: Sequence[tuple[float, int, float]]) -> tuple[int, list[float]] | None:
    """The step's measured time cut into STEADY_ROUNDS rounds of whole seconds (at least MIN_ROUND_S each)
    and each round's IOPS; None when the step is too short to judge (under STEADY_ROUNDS x MIN_ROUND_S
    measured): a round of one interval is one second's jitter, not a trend."""
    measured = sum(s for _, _, s in samples if s > 0)
    round_s = int((measured + 0.05) // STEADY_ROUNDS)  # fio's intervals run a few ms short or long
    if round_s < MIN_ROUND_S:
        return None
    rounds = rounds_of(samples, round_s)[:STEADY_ROUNDS]
    return (round_s, rounds) if len(rounds) == STEADY_ROUNDS else None


def too_short_to_judge(samples: Sequence[tuple[float, int, float]]) -> bool:
    """A step that did I/O but is too short for the steadiness rule (said once per run, never as a note)."""
    return any(n > 0 for _, n, _ in samples) and steady_rounds(samples) is None


def not_steady_notes(
    f: StepFacts, samples: Sequence[tuple[float, int, float]], pc: Precondition
) -> list[Note]:
    """The step's per-second ALL IOPS cut into STEADY_ROUNDS rounds, judged by the preconditioning rule
    (SNIA PTS: the rounds' range within ``tolerance_pct`` of their mean, the fitted line's excursion within
    ``slope_pct``)."""
    cut = steady_rounds(samples)
    if cut is None:
        return []
    round_s, rounds = cut
    rule = Precondition(
        round_s=round_s, window_rounds=STEADY_ROUNDS, tolerance_pct=pc.tolerance_pct, slope_pct=pc.slope_pct
    )
    if first_steady_window(rounds, rule) is not None:
        return []
    mean, spread, slope_pct = judge(rounds)
    if mean <= 0:
        return []
    figure = (
        f"IOPS over {STEADY_ROUNDS} rounds of {round_s} s: {', '.join(f'{r:,.0f}' for r in rounds)}; "
        f"range {spread:.0f} % of the mean (rule {pc.tolerance_pct} %), drift {slope_pct:+.0f} % "
        f"(rule ±{pc.slope_pct} %)"
    )
    return [
        Note(
            NOT_STEADY,
            f"{figure}: the step's mean hides a trend or swings",
            "run the step longer, "
            "precondition the target (Test Setup: Preconditioning), or look for background work "
            "(garbage collection, SLC cache filling, other traffic)",
            figure,
            f.step.index,
            None,
        )
    ]


def unjudged_line(run: Run, samples: Mapping[int, Sequence[tuple[float, int, float]]]) -> str | None:
    """ "Steadiness not judged on steps 1-24: too short to judge (…)", once for the run, or None. None for a
    PTS run: its steadiness is the PTS decision over its rounds, which its own section states."""
    from app.analysis.preconditioning import measured_steps
    from app.store.run_extras import PTS, extra

    if isinstance(extra(run, PTS), dict):
        return None
    measured = {s.index for s in measured_steps(run)}
    short = [
        s.index
        for s in run.steps
        if s.index in measured and s.status != "skipped" and too_short_to_judge(samples.get(s.index) or [])
    ]
    if not short:
        return None
    least = STEADY_ROUNDS * MIN_ROUND_S
    return (
        f"Steadiness ({_steps_words(short)}): too short to judge — the rule needs {STEADY_ROUNDS} rounds of "
        f"at least {MIN_ROUND_S} s, {least} s measured or more; not a sign of trouble"
    )


# ---------------------------------------------------------------------------------------------------------------


def run_notes(
    run: Run,
    samples: Mapping[int, Sequence[tuple[float, int, float]]] | None = None,
    facts: Mapping[tuple[int, str], Mapping[str, Any]] | None = None,
) -> list[Note]:
    """Every note of a run (needs ``get_run(..., raw_output=True)``). ``samples``: step index -> per-second ALL
    (t, I/Os, seconds); ``facts``: (step index, local manager) -> {"allocation": job -> (bytes written, bytes
    of the region read), "host_cpu_pct": the host's CPU busy %}, taken while the run ran."""
    from app.analysis.preconditioning import measured_steps, precondition_of

    pc = precondition_of(run)
    local = {m.name for m in run.managers if m.address == "local"}
    measured = {s.index for s in measured_steps(run)}
    out: list[Note] = []
    for step in run.steps:
        if step.index not in measured or step.status == "skipped":
            continue
        for manager, output in sorted(step.outputs.items()):
            jobs = parse_jobs(output.job_text or "")
            doc = _output(output.raw_output)
            if not jobs or not doc:
                continue
            seen = (facts or {}).get((step.index, manager), {})
            f = StepFacts(
                run, step, manager, jobs, doc, dict(seen.get("allocation") or {}), seen.get("host_cpu_pct")
            )
            out += never_written_notes(f) + cache_notes(f) + compressible_notes(f) + generator_notes(f)
            out += other_traffic_notes(f) + clock_notes(f, manager in local)
        if samples and samples.get(step.index):
            out += not_steady_notes(StepFacts(run, step, "", [], {}, {}), samples[step.index], pc)
    return out


def step_all_samples(store, run: Run) -> dict[int, list[tuple[float, int, float]]]:
    """Per-second ALL (t, I/Os, seconds) of every step, for the steadiness rule."""
    from app.engine.sampling.telemetry import ALL_KEY
    from app.store.queries import steps_interval_ios

    by_id = steps_interval_ios(store, [s.id for s in run.steps], "all", ALL_KEY)
    return {s.index: by_id.get(s.id, []) for s in run.steps}


def unjudged_of(run: Run, store) -> str | None:
    """The run's "too short to judge" line (steadiness), from its stored per-second samples; None for a run
    whose steps were all judged (or with no store to read them from)."""
    if store is None or not run.steps:
        return None
    return unjudged_line(run, step_all_samples(store, run))


def _with_outputs(run: Run, store) -> Run:
    """The run with fio's raw outputs, read again only when they were not (no results: no rule uses them)."""
    if any(o.raw_output is None for s in run.steps for o in s.outputs.values()) and store is not None:
        from app.store.queries import get_run

        return get_run(store, run.id, raw_output=True, result_levels=())
    return run


def notes_of(run: Run, store=None) -> list[Note]:
    """The run's stored notes; for a run stored without them, computed now (from what the store kept)."""
    from app.store.run_extras import stored_notes

    kept = stored_notes(run)
    if kept is not None:
        return [Note.from_json(d) for d in kept]
    run = _with_outputs(run, store)
    return run_notes(run, step_all_samples(store, run) if store is not None else None)


def notes_kept(store, run: Run) -> tuple[list[Note], str]:
    """The run's notes for a window, and how they were had: "stored"; "computed and kept" (a run stored
    without them, e.g. by an older Fiometer: computed once and kept with it, so the next opening reads
    them); "computed" (kept not: the run is still being recorded, or the database is read-only or
    busy; shown all the same). Keeping them changes nothing measured: only the notes' key of the run's
    ``host_json`` is written, and only while it is still absent (a recorder that ended the run meanwhile
    keeps its own notes, made with facts only the run could see)."""
    from app.store import StoreError
    from app.store.run_extras import keep_notes_if_absent, stored_notes

    kept = stored_notes(run)
    if kept is not None:
        return [Note.from_json(d) for d in kept], "stored"
    notes = notes_of(run, store)
    if run.status == "running":
        return notes, "computed"
    try:
        now = keep_notes_if_absent(store, run.id, [n.to_json() for n in notes])
    except StoreError:
        return notes, "computed"
    if now is None:
        return notes, "computed"
    return [Note.from_json(d) for d in now], "computed and kept"


def record_notes(store, run_id: int, facts=None) -> list[Note]:
    """Compute a finished run's notes and keep them with it."""
    from app.store.queries import get_run
    from app.store.run_extras import save_notes

    run = get_run(store, run_id, raw_output=True, result_levels=())
    notes = run_notes(run, step_all_samples(store, run), facts)
    save_notes(store, run_id, [n.to_json() for n in notes])
    return notes


def grouped(notes: Iterable[Note]) -> list[tuple[Note, list[int]]]:
    """Notes of one kind, manager and advice in several steps, once each with the steps' indexes (display);
    the first step's note stands for the others (their figures differ: ``show --json`` has each)."""
    out: dict[tuple[str, str | None, str], tuple[Note, list[int]]] = {}
    for n in notes:
        key = (n.kind, n.manager, n.advice)
        if key not in out:
            out[key] = (n, [])
        if n.step is not None:
            out[key][1].append(n.step)
    return list(out.values())


def _steps_words(steps: list[int]) -> str:
    """ "step 3", "steps 1-4, 7" (1-based, runs of consecutive steps as ranges)."""
    if not steps:
        return ""
    ordered = sorted(set(steps))
    spans: list[list[int]] = []
    for i in ordered:
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    words = [
        f"{a + 1}" if a == b else f"{a + 1}-{b + 1}" if b > a + 1 else f"{a + 1}, {b + 1}" for a, b in spans
    ]
    return ("step " if len(ordered) == 1 else "steps ") + ", ".join(words)


def lines(notes: Iterable[Note]) -> list[str]:
    """One line per note (same notes across steps once), for text output."""
    out = []
    everything = list(notes)
    for n, steps in grouped(everything):
        where = ", ".join(p for p in (_steps_words(steps), f"on {n.manager}" if n.manager else "") if p)
        alike = len(
            {m.text for m in everything if (m.kind, m.manager, m.advice) == (n.kind, n.manager, n.advice)}
        )
        text = f"step {n.step + 1}: {n.text}" if alike > 1 and n.step is not None else n.text
        out.append(f"{n.title}{' (' + where + ')' if where else ''}: {text}. What to do: {n.advice}.")
    return out


def differences(
    before: Iterable[Note],
    after: Iterable[Note],
    names: tuple[str, str] = ("before", "after"),
    brief: bool = False,
) -> list[str]:
    """For a comparison: the kinds of note one side carries and the other does not ("after: reads served
    from cache ..."). ``brief``: without the note's text, for a page that says each run's notes already."""
    a, b = list(before), list(after)
    kinds_a, kinds_b = {n.kind for n in a}, {n.kind for n in b}
    out = []
    for kind in KINDS:
        for side, notes, other in ((names[0], a, kinds_b), (names[1], b, kinds_a)):
            if kind in other:
                continue
            first = next((n for n in notes if n.kind == kind), None)
            if first is not None:
                other_name = names[1] if side == names[0] else names[0]
                if brief:
                    out.append(
                        f"{side} carries a note on {first.title.lower()} and {other_name} does not: a change "
                        "between them may be that, not the storage."
                    )
                else:
                    out.append(f"{side}: {first.title.lower()} — {first.text} (not in {other_name})")
    return out

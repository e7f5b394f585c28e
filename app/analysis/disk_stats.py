"""Disk statistics beside the results, as iostat computes them, from fio's own per-disk counters.

fio reports, for every disk behind a step's targets, the I/Os, merges and ticks the kernel counted
(``disk_util`` in its JSON output, the DU message of its server protocol). They are stored with each
step's raw output, locally and remotely, so every stored run has them. From them, per step and disk:

- ``await`` = (read ticks + write ticks) / (reads + writes), in ms (iostat's r_await/w_await likewise);
- ``aqu-sz`` (average queue size) = time in queue / the window, both in ms;
- ``%util`` = fio's own utilisation (time the disk was busy / the window).

r/s, w/s, rkB/s, wkB/s and the request sizes rareq-sz/wareq-sz (KiB) are computed from the disk's counts
alone, all over one and the same window (:func:`rates`), never with fio's bytes: fio 3.36 and later count
the sectors the disk moved (``read_sectors``) over its window; for an older local fio, Fiometer added the
kernel's counters over the same span as the I/O counts of the disk entries it writes itself (a target held
open and handed to fio: ``span_read_sectors``), else between fio's first report and its last
(``kernel_window``); where none is there the byte figures are left empty.

The window is the disk's own clock where fio sent it (a fio server's DU message), else the longest
job's runtime plus the step's ramp-up: fio counts disk statistics from the moment its jobs start, ramp
included. The same figures per report, live, come from :mod:`app.engine.sampling.disk_telemetry`. Disks are named as the kernel names them (``sda``, ``nvme0n1``,
``dm-0``); the targets on each disk come from the run's target details (``disk``, recorded locally).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.analysis.fio_json import fio_document
from app.model.disk_metrics import DiskCounts
from app.store.records import Run, StepInfo


@dataclass(frozen=True)
class DiskStat:
    step: int
    manager: str
    disk: str
    reads: int
    writes: int
    read_merges: int
    write_merges: int
    r_await_ms: float | None
    w_await_ms: float | None
    await_ms: float | None
    aqu_sz: float | None
    util_pct: float
    window_s: float
    targets: tuple[str, ...] = field(default=())
    r_s: float | None = None  # iostat's, all five over one window (``rates``)
    w_s: float | None = None
    rkb_s: float | None = None
    wkb_s: float | None = None
    rareq_kib: float | None = None
    wareq_kib: float | None = None
    rates_window_s: float | None = None  # the window of those five


@dataclass(frozen=True)
class Rates:
    """iostat's r/s, w/s, rkB/s, wkB/s, rareq-sz and wareq-sz (KiB) over one window of one disk's counts."""

    window_s: float
    reads: float
    writes: float
    read_bytes: float | None  # None: the disk's sectors are not known
    write_bytes: float | None

    def _per_s(self, n: float | None) -> float | None:
        return n / self.window_s if n is not None and self.window_s > 0 else None

    @property
    def r_s(self) -> float | None:
        return self._per_s(self.reads)

    @property
    def w_s(self) -> float | None:
        return self._per_s(self.writes)

    @property
    def rkb_s(self) -> float | None:
        return self._per_s(None if self.read_bytes is None else self.read_bytes / 1024)

    @property
    def wkb_s(self) -> float | None:
        return self._per_s(None if self.write_bytes is None else self.write_bytes / 1024)

    @property
    def rareq_kib(self) -> float | None:
        return self.read_bytes / 1024 / self.reads if self.read_bytes is not None and self.reads else None

    @property
    def wareq_kib(self) -> float | None:
        return self.write_bytes / 1024 / self.writes if self.write_bytes is not None and self.writes else None


MIN_KERNEL_WINDOW_S = 0.5  # a kernel window shorter than this (a step of one report) says too little


def rates(entry: dict, window_s: float, span: bool = False) -> Rates:
    """The disk's rates from one ``disk_util`` entry over ``window_s`` (its window): with fio's own sectors
    when it counts them, or (``span``) the kernel's sectors Fiometer counted over the same span as the
    entry's I/O counts; else the kernel's window Fiometer added between fio's reports; else fio's I/O counts
    without bytes. The span is preferred to the kernel window: both its counts cover the whole step, as
    fio's disk figures do (a window between two reports of a short step misses part of it: 1 s steps showed
    rkB/s 6 to 12 % below fio's MB/s)."""
    reads, writes = float(entry.get("read_ios") or 0), float(entry.get("write_ios") or 0)
    own = "read_sectors" if "read_sectors" in entry else "span_read_sectors" if span else ""
    if own in entry:
        sectors = (entry.get(own) or 0, entry.get(own.replace("read", "write")) or 0)
        return Rates(window_s, reads, writes, float(sectors[0]) * 512, float(sectors[1]) * 512)
    k = entry.get("kernel_window")
    if isinstance(k, dict) and float(k.get("msec") or 0) / 1000.0 >= MIN_KERNEL_WINDOW_S:
        return Rates(
            float(k["msec"]) / 1000.0,
            float(k.get("read_ios") or 0),
            float(k.get("write_ios") or 0),
            float(k.get("read_sectors") or 0) * 512,
            float(k.get("write_sectors") or 0) * 512,
        )
    return Rates(window_s, reads, writes, None, None)


def _window_s(doc: dict, step: StepInfo) -> float:
    jobs = doc.get("jobs") or doc.get("client_stats") or []  # a local fio's JSON / a remote manager's
    runtimes = [float(j.get("job_runtime") or 0) for j in jobs if isinstance(j, dict)]
    return (max(runtimes, default=0.0) / 1000.0) + float(step.ramp_s or 0)


def step_disk_stats(run: Run, step: StepInfo) -> list[DiskStat]:
    """One row per manager and disk of the step; nothing where fio reported no disks (Windows, tmpfs)."""
    on_disk: dict[tuple[str, str], list[str]] = {}
    for t in run.targets:
        disk = t.details.get("disk") if isinstance(t.details, dict) else None
        if disk:
            on_disk.setdefault((t.manager, str(disk)), []).append(t.name)
    out: list[DiskStat] = []
    for manager, output in sorted(step.outputs.items()):
        doc = fio_document(output.raw_output)
        if doc is None:
            continue
        window = _window_s(doc, step)
        for d in doc.get("disk_util") or []:
            if not isinstance(d, dict) or "name" not in d:
                continue
            # a fio server's DU carries the disk's own clock (kept in the stored output): exact
            c = DiskCounts.from_fio(d, float(d["msec"]) if d.get("msec") else window * 1000.0)
            rt = rates(d, c.window_ms / 1000.0, span=True)
            out.append(
                DiskStat(
                    step.index,
                    manager,
                    str(d["name"]),
                    int(c.read_ios),
                    int(c.write_ios),
                    int(c.read_merges),
                    int(c.write_merges),
                    c.r_await_ms,
                    c.w_await_ms,
                    c.await_ms,
                    c.aqu_sz,
                    float(d.get("util") or 0),
                    c.window_ms / 1000.0,
                    tuple(on_disk.get((manager, str(d["name"])), ())),
                    rt.r_s,
                    rt.w_s,
                    rt.rkb_s,
                    rt.wkb_s,
                    rt.rareq_kib,
                    rt.wareq_kib,
                    rt.window_s,
                )
            )
    return out


def run_disk_stats(run: Run) -> list[DiskStat]:
    return [row for step in run.steps for row in step_disk_stats(run, step)]

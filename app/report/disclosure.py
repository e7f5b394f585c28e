"""The report's disclosure appendix (Qt-free): what a client must know to read the numbers - the engine and
options each run used, the test-file sizes (and whether they were scaled down from the plan's), what fio
cannot reproduce of the Iometer plan (fidelity notes), the runs' own notes, steps that did not run to their
end, and what the numbers mean."""

from __future__ import annotations

from app.analysis.compare import io_engines, job_facts, run_time_text
from app.analysis.stored_plan import stored_plan
from app.analysis.timed_transfer import transfer_bytes
from app.model.fidelity import all_notes
from app.model.plan import DEFAULT_TEST_FILE_SIZE
from app.model.units import format_bytes
from app.store.records import Run

MEANING = [
    "Response time is fio's total latency of each I/O, from submission to completion (Iometer's response "
    "time); average, maximum and percentiles in milliseconds.",
    "Percentiles come from fio's latency histograms (merged across jobs); a histogram bin's upper edge can lie "
    "above the largest response time measured, so no percentile is shown above the maximum.",
    "MB/s is decimal (1 MB = 10\u2076 bytes); IOPS are I/Os completed per second of the step's measured time "
    "(ramp-up and test-file layout excluded).",
    "A change is called better or worse only beyond the noise threshold (the spread of repeated runs, or the "
    "threshold given); findings name the load (queue depth, workers, targets) they were measured at.",
    "Preconditioning (fill, steady state) prepares the device and is reported apart, never as a result.",
]


def _planned_sizes(run: Run) -> set[str]:
    """The test-file sizes the stored plan asks for (its workers' maximum size, else the default)."""
    plan = stored_plan(run)
    if plan is None:
        return set()
    sizes = {
        format_bytes(w.max_size * 512) if w.max_size else format_bytes(DEFAULT_TEST_FILE_SIZE)
        for m in plan.managers
        for w in m.workers
        if w.targets
    }
    return sizes


def _stored_plan_damaged(run: Run) -> bool:
    return stored_plan(run) is None


def damaged_plan(run: Run, who: str) -> list[str]:
    """The line saying that ``run``'s stored plan cannot be read, or none: a report and ``fiometer compare``
    go on with the results the store holds."""
    if not _stored_plan_damaged(run):
        return []
    return [
        f"{who}: its stored plan cannot be read (damaged in the results database); the planned test-file "
        "sizes and fidelity notes are not shown."
    ]


def _fidelity(run: Run) -> list[str]:
    plan = stored_plan(run)
    if plan is None:
        return []
    return [f"{n.where}: {n.message}" for n in all_notes(plan)]


def _sections(job_text: str) -> dict[str, dict[str, str]]:
    """A job file's sections and their options (the last value of each)."""
    out: dict[str, dict[str, str]] = {}
    section = ""
    for line in job_text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and not line.startswith((";", "#")):
            k, _, v = line.partition("=")
            out.setdefault(section, {})[k.strip()] = v.strip()
    return out


def target_extents(run: Run) -> tuple[set[str], list[str]]:
    """(the sizes of the test files, a line per raw device with its own size): a device is no test file of
    the plan's size ("raw device /dev/loop0 (target T): the device itself, 512 MiB (no test file)")."""
    files: set[str] = set()
    devices: dict[str, str] = {}
    for step in run.steps:
        for manager, output in step.outputs.items():
            sections = _sections(output.job_text or "")
            for t in run.targets:
                if t.manager != manager:
                    continue
                opts = next((o for name, o in sections.items() if name.endswith("." + t.key)), None)
                if opts is None:
                    continue
                env = t.details.get("environment") or {}
                size = opts.get("size", "")
                if env.get("kind") != "block device":
                    files.update({format_bytes(int(size)) if size.isdigit() else size} - {""})
                    continue
                whole = env.get("device_size_bytes")
                place = f"raw device {t.path or t.name}" + (f" (target {t.name})" if t.path else "")
                if size.isdigit() and (not whole or int(size) < whole):
                    devices[place] = (
                        f"{place}: its first {format_bytes(int(size))}"
                        + (f" of {format_bytes(whole)}" if whole else "")
                        + " (the plan's maximum disk size; no test file)"
                    )
                else:
                    devices.setdefault(
                        place,
                        f"{place}: the device itself, {format_bytes(whole)} (no test file)"
                        if whole
                        else f"{place}: the device itself (no test file)",
                    )
    return files, list(devices.values())


def run_disclosure(run: Run, label: str) -> list[str]:
    out = []
    who = f"Run {run.id} ({label})"
    engine, sizes = job_facts(run)
    tools = ", ".join(f"fio {v}" for v in run.fio_versions) or "fio"
    if engines := io_engines(run):
        tools += f" (I/O engine {' / '.join(sorted(engines))})"
    if engine or engines:
        out.append(
            f"{who}: measured with {tools}"
            + (f"; engine options {', '.join(sorted(engine))}." if engine else ".")
        )
    files, devices = target_extents(run)
    sizes = files if files or devices else sizes  # a raw device's extent is its own, not a test file's
    planned = _planned_sizes(run)
    out += [f"{who}: {d}." for d in devices]
    if sizes:
        from app.analysis.validity import cache_can_serve

        scaled = planned and planned != sizes
        cached = " (buffered I/O on a file this small can be served from the host's cache)"
        out.append(
            f"{who}: test files of {', '.join(sorted(sizes))}"
            + (
                f", scaled down from the plan's {', '.join(sorted(planned))}"
                f"{cached if cache_can_serve(run) else ''}."
                if scaled
                else "."
            )
        )
    out += damaged_plan(run, who)
    out += overrides(run, who)
    out += [f"{who}: fio cannot reproduce exactly - {n}" for n in _fidelity(run)]
    if run.notes.strip():
        out.append(f"{who}: note - {run.notes.strip()}")
    for s in run.steps:
        if s.status not in ("complete",):
            out.append(
                f"{who}: step {s.index + 1} ({s.spec_name}) {s.status} - its numbers are partial and "
                "are left out of the findings."
            )
    return out


def overrides(run: Run, who: str) -> list[str]:
    """Step times that are not the plan's: a run's --run-time / --ramp-up (the size scaling is said above)."""
    setup = run.plan_setup()
    out = []
    limit = "time limit (a cap)" if transfer_bytes(run) else "run time"
    for word, planned, ran in (
        (limit, setup.get("run_time"), {s.run_s for s in run.steps if s.results}),
        ("ramp-up", setup.get("ramp_up"), {s.ramp_s for s in run.steps if s.results}),
    ):
        if not isinstance(planned, (int, float)) or not ran or ran == {planned}:
            continue
        said = " / ".join(run_time_text(v) for v in sorted(ran)) if word == limit else None
        said = said or " / ".join(f"{v:g} s" for v in sorted(ran))
        planned_text = run_time_text(planned) if word == limit else f"{planned:g} s"
        out.append(f"{who}: {word} per step {said}, set for this run in place of the plan's {planned_text}.")
    return out


def disclosure(runs: list[tuple[Run, str]]) -> list[str]:
    """The appendix's lines: each run's engine, sizes, overrides, fidelity notes and notes, a line the runs
    share said once naming them all ("Runs 1 (before), 2 (after): ..."), then what the numbers mean."""
    said: dict[str, list[str]] = {}
    for run, label in runs:
        who = f"Run {run.id} ({label})"
        for line in run_disclosure(run, label):
            text = line.removeprefix(f"{who}: ")
            named = said.setdefault(text, [])
            if f"{run.id} ({label})" not in named:
                named.append(f"{run.id} ({label})")
    lines = [
        f"Run {names[0]}: {text}" if len(names) == 1 else f"Runs {', '.join(names)}: {text}"
        for text, names in said.items()
    ]
    return lines + MEANING

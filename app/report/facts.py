"""What a report states about each run (Qt-free): tool and versions, hosts, targets, direct I/O, times,
plan hash, and the exact fio job files - so every number can be audited and the test reproduced."""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.analysis.compare import Side, io_engines, run_time_text
from app.analysis.iometer_import import is_iometer_run
from app.analysis.preconditioning import measured_steps
from app.analysis.timed_transfer import transfer_bytes
from app.model.plan import AUTO_ENGINE
from app.model.units import format_bytes
from app.report.tables import Cell, Column, Row, Table, run_label
from app.store.records import Run

DASH = "\u2013"


@dataclass
class JobFileText:
    """A job file as a report shows it: a title and fio's job text as stored (the engine's ``JobFile`` is
    the job file being made for fio)."""

    title: str  # e.g. "Step 1 (Max Throughput-100%Read), manager PB-W2K3-04"
    text: str


def _when(iso: str | None) -> str:
    return iso[:19].replace("T", " ") + " UTC" if iso else "\u2013"


def job_options(run: Run, option: str) -> set[str]:
    """Every value a global or job option takes in the run's job files (e.g. direct, ioengine)."""
    return {
        v
        for s in run.steps
        for o in s.outputs.values()
        if o.job_text
        for v in parse_job_options(o.job_text).get(option, "").split(" / ")
        if v
    }


def io_engine(run: Run) -> str:
    """fio's engine as the job files name it, with io_uring's options, and whether the plan left the choice
    to Fiometer ("io_uring (fixedbufs); chosen automatically")."""
    engines = io_engines(run)
    if not engines:
        return "not recorded"
    try:
        choice = json.loads(run.plan_json or "{}").get("plan", {}).get("setup", {}).get("engine")
    except (ValueError, AttributeError):
        choice = None
    return " / ".join(sorted(engines)) + ("; chosen automatically" if choice == AUTO_ENGINE else "")


def direct_io(run: Run) -> str:
    values = job_options(run, "direct")
    if values:
        return {frozenset({"1"}): "yes (direct=1)", frozenset({"0"}): "no (buffered, direct=0)"}.get(
            frozenset(values), "mixed: direct=" + "/".join(sorted(values))
        )
    flags = {t.details.get("direct") for t in run.targets if "direct" in t.details}
    return "yes" if flags == {True} else "no" if flags == {False} else "not recorded"


def facts_table(run: Run) -> Table:
    """What identifies a run (the machine and targets are in the environment table)."""
    rows: list[tuple[str, str]] = [
        ("Run", run_label(run)),
        ("Status", run.status),
        ("Started", _when(run.started)),
        ("Ended", _when(run.ended)),
        ("Plan", run.plan_name or DASH),
        ("Plan SHA-256", run.plan_sha256),
    ]
    if run.tags:
        rows.append(("Tags", ", ".join(run.tags)))
    if run.notes:
        rows.append(("Notes", run.notes))
    if is_iometer_run(run):
        rows.append(
            (
                "Measured with",
                f"Iometer {run.host.get('tool_version', '')} (imported from "
                f"{run.host.get('imported_from', 'a results.csv')})",
            )
        )
    else:
        h = run.host
        rows.append(("Recorded by", f"Fiometer {h.get('fiometer', '?')} on {h.get('hostname', '?')}"))
        engines = job_options(run, "ioengine")
        if engines:
            rows.append(("I/O engine", ", ".join(sorted(engines))))
    names = {(w.manager, w.key): w.name for w in run.workers}
    for m in run.managers:
        where = "this machine" if m.address in ("", "local") else m.address
        rows.append((f"Manager {m.name}", where))
    for t in run.targets:
        who = f"{t.manager} / {names.get((t.manager, t.worker), t.worker)}"
        rows.append((f"Target {t.name}", f"{t.path or t.name} ({who})"))
    rows.append(
        ("Steps", f"{len(run.steps)} ({sum(1 for s in run.steps if s.status == 'complete')} complete)")
    )
    table_rows = [Row([Cell(k, k), Cell(v, v)]) for k, v in rows]
    return Table(
        f"facts-{run.id}", f"{run_label(run)} \u2014 run facts", [Column("Fact"), Column("Value")], table_rows
    )


def job_files(run: Run) -> list[JobFileText]:
    out = []
    for s in run.steps:
        for manager, o in sorted(s.outputs.items()):
            if o.job_text:
                out.append(
                    JobFileText(f"Step {s.index + 1} ({s.spec_name}), manager {manager}", o.job_text.rstrip())
                )
    return out


# --- the test environment, side by side ------------------------------------------------------------------
def size_text(n: float | None) -> str:
    if not n:
        return ""
    for unit, f in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= f:
            return f"{n / f:.3g} {unit}"
    return f"{n:.0f} bytes"


def _manager_env(run: Run) -> dict[str, dict]:
    """Each manager's machine as recorded when the run started (older runs: the Fiometer host for local)."""
    stored = run.host.get("managers") or {}
    out = {}
    for m in run.managers:
        env = dict(stored.get(m.name) or {})
        if not env and m.address in ("", "local") and not is_iometer_run(run):
            env = {k: run.host[k] for k in ("hostname", "cpus") if k in run.host}
            env["os_release"] = run.host.get("os", "")
        env.setdefault("fio_version", m.fio_version)
        out[m.name] = env
    return out


def environment_rows(run: Run, by_position: bool = False) -> list[tuple[str, str]]:
    """(fact, value) of one run, in the order the environment table shows them; ``by_position``: targets
    named "Target 1", "Target 2" (their names in the value), so that runs whose targets are named
    differently share rows instead of each having its own half-empty ones."""
    rows: list[tuple[str, str]] = []
    managers = _manager_env(run)
    many = len(managers) > 1
    for name, env in managers.items():
        pre = f"{name}: " if many else ""
        os_text = " ".join(x for x in (env.get("os_release") or env.get("os", ""),) if x)
        kernel = " ".join(
            x
            for x in (
                env.get("os", "") if env.get("os_release") else "",
                env.get("kernel", ""),
                env.get("arch", ""),
            )
            if x
        )
        cpu = ", ".join(
            x for x in (env.get("cpu_model", ""), f"{env['cpus']} CPUs" if env.get("cpus") else "") if x
        )
        rows += [
            (f"{pre}Host", env.get("hostname", "") or ("this machine" if not many else name)),
            (f"{pre}Operating system", os_text),
            (f"{pre}Kernel", kernel),
            (f"{pre}CPU", cpu),
            (f"{pre}Memory", size_text(env.get("memory_bytes"))),
            (f"{pre}fio", env.get("fio_version", "") and f"fio {env['fio_version']}"),
        ]
    for i, t in enumerate(run.targets, 1):
        env = t.details.get("environment") or {}
        pre = f"Target {t.name}" if len(run.targets) > 1 else "Target"
        place = t.path or t.name
        if by_position and len(run.targets) > 1:
            pre, place = f"Target {i}", f"{t.name} ({place})" if t.path and t.path != t.name else place
        rows.append((pre, place))
        if env.get("kind") == "block device":
            dev = ", ".join(
                x for x in (env.get("device_model", ""), size_text(env.get("device_size_bytes"))) if x
            )
            rows.append((f"{pre}: device", dev or "block device"))
        elif env:
            rows.append(
                (
                    f"{pre}: file system",
                    " ".join(
                        x
                        for x in (
                            env.get("fs_type", ""),
                            "on " + env["mount_point"] if env.get("mount_point") else "",
                        )
                        if x
                    ),
                )
            )
            rows.append((f"{pre}: mount options", env.get("mount_options", "")))
            if env.get("device"):
                dev = ", ".join(
                    x
                    for x in (
                        env.get("device", ""),
                        env.get("device_model", ""),
                        size_text(env.get("device_size_bytes")),
                    )
                    if x
                )
                rows.append((f"{pre}: device", dev))
        if env.get("scheduler"):
            rows.append((f"{pre}: I/O scheduler", env["scheduler"]))
        if env.get("queue_settings"):
            rows.append((f"{pre}: queue settings", env["queue_settings"]))
    rows.append(("I/O engine", io_engine(run)))
    rows.append(("Direct I/O", direct_io(run)))
    times = sorted(
        {(s.run_s, s.ramp_s) for s in measured_steps(run)} or {(s.run_s, s.ramp_s) for s in run.steps}
    )
    limit = "; ".join(dict.fromkeys(run_time_text(r) for r, _ in times)) or DASH
    moved = transfer_bytes(run)
    if moved:  # a timed transfer ends once its bytes are moved: its run time is only a cap
        rows.append(("Transfer per step", f"{format_bytes(moved)} per job (the step ends once it is moved)"))
        rows.append(("Time limit per step", f"{limit} (a cap, not the time measured)"))
    else:
        rows.append(("Run time per step", limit))
    rows.append(("Ramp-up per step", "; ".join(dict.fromkeys(f"{ramp:g} s" for _, ramp in times)) or DASH))
    return [(k, v) for k, v in rows if v]


def environment_table(sides: list[Side], labels: list[str]) -> Table:
    """A column per side; where the runs of a side differ, every value is listed."""
    per_side: list[dict[str, list[str]]] = []
    order: list[str] = []
    named = {tuple(t.name for t in run.targets) for side in sides for run in side.runs}
    for side in sides:
        facts: dict[str, list[str]] = {}
        for run in side.runs:
            for k, v in environment_rows(run, by_position=len(named) > 1):
                if k not in order:
                    order.append(k)
                if v not in facts.setdefault(k, []):
                    facts[k].append(v)
        per_side.append(facts)
    cols = [Column("")] + [Column(label) for label in labels]
    rows = []
    for k in order:
        values = ["; ".join(f.get(k, [])) or DASH for f in per_side]
        rows.append(Row([Cell(k, k)] + [Cell(v, v) for v in values]))
    notes = [
        "Collected when each run started: the machine from the operating system (a remote manager as its "
        "fio server describes itself), a local target's file system and device from /proc and /sys."
    ]
    if any(not (r.host.get("managers")) for s in sides for r in s.runs):
        notes.append("Runs recorded before Fiometer collected the environment show only what they stored.")
    return Table("environment", "Test environment", cols, rows, notes, group_title="")


# --- job files, condensed --------------------------------------------------------------------------------
IGNORED_OPTIONS = {"name", "description"}


def parse_job_options(text: str) -> dict[str, str]:
    """Every option of a job file and the values it takes across its sections ("rw=randrw; read")."""
    values: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        k, _, v = line.partition("=")
        k = k.strip()
        if k in IGNORED_OPTIONS:
            continue
        vals = values.setdefault(k, [])
        if v.strip() not in vals:
            vals.append(v.strip())
    return {k: " / ".join(x for x in v if x) for k, v in values.items()}


def job_options_table(runs: list[Run]) -> Table:
    """Per step: the fio options that differ from the first job file (shown in full beside this table);
    runs whose steps differ in the same way share a row."""
    files = [
        (r, s, m, o.job_text)
        for r in runs
        for s in r.steps
        for m, o in sorted(s.outputs.items())
        if o.job_text
    ]
    if not files:
        return Table(
            "job-options",
            "fio job files: what differs between steps",
            [Column("Step")],
            [],
            ["No fio job files: these results were imported, not measured."],
        )
    first = parse_job_options(files[0][3])
    grouped: dict[tuple[int, str, str, str], list[int]] = {}
    for r, s, m, text in files:
        opts = parse_job_options(text)
        diff = [f"{k}={v}" if v else k for k, v in opts.items() if first.get(k) != v]
        diff += [f"{k} (not set)" for k in first if k not in opts]
        grouped.setdefault((s.index, s.spec_name, m, "  ".join(diff) or "(as the full job file)"), []).append(
            r.id
        )
    rows = []
    for (index, spec, manager, diff), ids in grouped.items():
        many = len({m for _, _, m, _ in files}) > 1
        runs_text = ", ".join(map(str, ids))
        rows.append(
            Row(
                [
                    Cell(runs_text, runs_text),
                    Cell(str(index + 1), index + 1),
                    Cell(spec + (f" ({manager})" if many else ""), spec),
                    Cell(diff, diff),
                ]
            )
        )
    rows.sort(key=lambda r: (r.cells[1].value, r.cells[0].text))
    r0, s0, m0, _ = files[0]
    notes = [
        f"Options that differ from the full job file shown (run {r0.id}, step {s0.index + 1}, "
        f"manager {m0}); every job file is in the HTML report and the workbook."
    ]
    return Table(
        "job-options",
        "fio job files: what differs between steps",
        [Column("Runs"), Column("Step", True), Column("Access specification"), Column("Options")],
        rows,
        notes,
    )

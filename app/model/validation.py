"""Field-level checks of a plan. Each problem names the field path, the value and the allowed range."""

from __future__ import annotations

from dataclasses import dataclass

from app.model.plan import (
    ASSIGNMENTS,
    DATA_PATTERNS,
    ENGINES,
    IDLE,
    STEP_TYPES,
    TEST_TYPES,
    URING_OPTIONS,
    AccessSpec,
    Plan,
    TestSetup,
)
from icf_import.read_specs import percent_total_words  # (the one verdict, also used from here)

MAX_TRANSFER = 1024**3 - 1  # Iometer's GUI limit: 1023 MB + 1023 KB + 1023 B
MAX_QUEUE_DEPTH = 65535
MAX_SPEC_LINES = 100  # Iometer's MAX_ACCESS_SPECS per spec
MAX_SECONDS = 7 * 24 * 3600
MIN_NET_PORT = 1024  # fixed network ports: not the privileged ones


@dataclass
class Problem:
    path: str  # e.g. "specs[2].lines[0].reads": for code (which editor, which field), never shown
    message: str
    severity: str = "error"  # error | warning
    place: str = ""  # e.g. 'access specification "Mixed", line 1, % read': what the user reads

    def __str__(self) -> str:
        return f"{self.place or self.path}: {self.message}"


# the words shown for a field (Iometer's labels where it has them)
FIELD_WORDS = {
    "size": "transfer size",
    "of_size": "% of access specification",
    "reads": "% read",
    "random": "% random",
    "delay": "delay",
    "burst": "burst length",
    "align": "alignment",
    "reply": "reply size",
    "name": "name",
    "default_assignment": "default assignment",
    "lines": "lines",
    "queue_depth": "# of outstanding I/Os",
    "max_size": "maximum disk size",
    "start_sector": "starting disk sector",
    "data_pattern": "write I/O data pattern",
    "kind": "kind",
    "port": "port",
    "run_time": "run time",
    "ramp_up": "ramp up time",
    "test_type": "cycling options",
    "update_frequency": "update frequency",
    "update_type": "results since",
    "transfer_bytes": "data to transfer",
    "engine": "I/O engine",
    "engine_options": "io_uring options",
    "worker_cycling": "worker cycling",
    "target_cycling": "target cycling",
    "queue_depth_cycling": "# of outstanding I/Os cycling",
    "precondition": "preconditioning",
    "fill_passes": "fill passes",
    "round_s": "round length",
    "window_rounds": "window",
    "tolerance_pct": "tolerance",
    "slope_pct": "slope",
    "max_s": "longest",
    "start": "start",
    "end": "end",
    "step": "step",
    "step_type": "step type",
}


def describe(plan: Plan, path: str) -> str:
    """A field path in the user's words: the names of the spec, manager, worker and target, the line
    number counted from 1 and the field's label (``specs[1].lines[0].reads`` -> 'access specification
    "Mixed", line 1, % read')."""
    words: list[str] = []
    spec = manager = worker = None
    for part in path.split("."):
        name, _, rest = part.partition("[")
        index = int(rest.rstrip("]")) if rest else None
        if name == "setup":
            words.append("Test Setup")
        elif name == "specs" and index is not None and manager is None:
            spec = plan.specs[index] if index < len(plan.specs) else None
            words.append(
                f'access specification "{spec.name}"'
                if spec and spec.name.strip()
                else f"access specification {index + 1}"
            )
        elif name == "lines" and index is not None:
            words.append(f"line {index + 1}")
        elif name == "managers" and index is not None:
            manager = plan.managers[index] if index < len(plan.managers) else None
            words.append(
                f'manager "{manager.name}"' if manager and manager.name.strip() else f"manager {index + 1}"
            )
        elif name == "workers" and index is not None and manager is not None:
            worker = manager.workers[index] if index < len(manager.workers) else None
            words.append(
                f'worker "{worker.name}"' if worker and worker.name.strip() else f"worker {index + 1}"
            )
        elif name == "targets" and index is not None and worker is not None:
            t = worker.targets[index] if index < len(worker.targets) else None
            words.append(
                f'target "{t.name or t.path}"' if t and (t.name or t.path) else f"target {index + 1}"
            )
        elif name == "specs" and index is not None:
            words.append(f"assigned access specification {index + 1}")
        else:
            words.append(FIELD_WORDS.get(name, name.replace("_", " ")))
    return ", ".join(words)


def _range(out: list[Problem], path: str, value: object, lo: int, hi: int, what: str = "") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        unit = f" {what}" if what else ""
        out.append(Problem(path, f"must be a whole number from {lo} to {hi}{unit}, got {value!r}"))


def _choice(out: list[Problem], path: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        out.append(Problem(path, f"must be one of {', '.join(allowed)}, got {value!r}"))


def validate(plan: Plan) -> list[Problem]:
    """All problems of the plan, errors and warnings (each named in the user's words, ``place``); an empty
    list means it can run."""
    out = _problems(plan)
    for p in out:
        p.place = describe(plan, p.path)
    return out


def _engine_problems(out: list[Problem], s: TestSetup) -> None:
    _choice(out, "setup.engine", s.engine, ENGINES)
    for i, option in enumerate(s.engine_options):
        _choice(out, f"setup.engine_options[{i}]", option, URING_OPTIONS)
    if s.engine_options and s.engine not in ("auto", "io_uring"):
        out.append(
            Problem(
                "setup.engine_options",
                f"are io_uring's, and the engine is {s.engine}: choose io_uring (or auto), or clear them",
            )
        )


def _setup_problems(out: list[Problem], s: TestSetup) -> None:
    """The Test Setup's fields: ranges, choices, cycling, preconditioning."""
    _range(out, "setup.run_time", s.run_time, 0, MAX_SECONDS, "seconds")
    _range(out, "setup.ramp_up", s.ramp_up, 0, MAX_SECONDS, "seconds")
    _choice(out, "setup.test_type", s.test_type, TEST_TYPES)
    for name, cyc in (("worker_cycling", s.worker_cycling), ("target_cycling", s.target_cycling)):
        _range(out, f"setup.{name}.start", cyc.start, 1, 1 << 20)
        _range(out, f"setup.{name}.step", cyc.step, 1, 1 << 20)
        _choice(out, f"setup.{name}.step_type", cyc.step_type, STEP_TYPES)
    q = s.queue_depth_cycling
    _range(out, "setup.queue_depth_cycling.start", q.start, 1, MAX_QUEUE_DEPTH)
    _range(out, "setup.queue_depth_cycling.end", q.end, 1, MAX_QUEUE_DEPTH)
    _range(out, "setup.queue_depth_cycling.step", q.step, 1, MAX_QUEUE_DEPTH)
    _choice(out, "setup.queue_depth_cycling.step_type", q.step_type, STEP_TYPES)
    if isinstance(q.start, int) and isinstance(q.end, int) and q.end < q.start:
        out.append(
            Problem("setup.queue_depth_cycling.end", f"must be at least start ({q.start}), got {q.end}")
        )
    _range(out, "setup.update_frequency", s.update_frequency, 0, 3600, "seconds")
    _choice(out, "setup.update_type", s.update_type, ("WHOLE_TEST", "LAST_UPDATE"))
    _range(out, "setup.transfer_bytes", s.transfer_bytes, 0, 1 << 50, "bytes")
    _engine_problems(out, s)
    pc = s.precondition
    _range(out, "setup.precondition.fill_passes", pc.fill_passes, 0, 100)
    _range(out, "setup.precondition.round_s", pc.round_s, 1, MAX_SECONDS, "seconds")
    _range(out, "setup.precondition.window_rounds", pc.window_rounds, 2, 100, "rounds")
    _range(out, "setup.precondition.tolerance_pct", pc.tolerance_pct, 1, 100, "%")
    _range(out, "setup.precondition.slope_pct", pc.slope_pct, 1, 100, "%")
    _range(out, "setup.precondition.max_s", pc.max_s, 1, MAX_SECONDS, "seconds")


def _spec_problems(out: list[Problem], specs: list[AccessSpec]) -> None:
    """Each access specification: its name (not empty, no comma, once), its lines and their total."""
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        p = f"specs[{i}]"
        if not spec.name.strip():
            out.append(Problem(f"{p}.name", "must not be empty"))
        elif "," in spec.name:
            out.append(
                Problem(
                    f"{p}.name", f"must not contain a comma (Iometer cuts names there), got {spec.name!r}"
                )
            )
        if spec.name.casefold() in seen:
            out.append(Problem(f"{p}.name", f"duplicate spec name {spec.name!r}"))
        seen.add(spec.name.casefold())
        _choice(out, f"{p}.default_assignment", spec.default_assignment, ASSIGNMENTS)
        if not 1 <= len(spec.lines) <= MAX_SPEC_LINES:
            out.append(Problem(f"{p}.lines", f"must have 1 to {MAX_SPEC_LINES} lines, has {len(spec.lines)}"))
        for j, ln in enumerate(spec.lines):
            lp = f"{p}.lines[{j}]"
            _range(out, f"{lp}.size", ln.size, 1, MAX_TRANSFER, "bytes")
            _range(out, f"{lp}.of_size", ln.of_size, 0, 100, "%")
            _range(out, f"{lp}.reads", ln.reads, 0, 100, "%")
            _range(out, f"{lp}.random", ln.random, 0, 100, "%")
            _range(out, f"{lp}.delay", ln.delay, 0, 3_600_000, "ms")
            _range(out, f"{lp}.burst", ln.burst, 1, 1 << 20, "I/Os")
            _range(out, f"{lp}.align", ln.align, 0, MAX_TRANSFER, "bytes")
            _range(out, f"{lp}.reply", ln.reply, 0, MAX_TRANSFER, "bytes")
        total = sum(ln.of_size for ln in spec.lines if isinstance(ln.of_size, int))
        if spec.lines and total != 100:
            out.append(
                Problem(f"{p}.lines", percent_total_words(total))  # an error: Start refuses it
            )


def _problems(plan: Plan) -> list[Problem]:
    out: list[Problem] = []
    _setup_problems(out, plan.setup)
    _spec_problems(out, plan.specs)
    names: set[str] = set()
    ports: dict[int, str] = {}  # fixed network ports -> whose
    for i, m in enumerate(plan.managers):
        p = f"managers[{i}]"
        if not m.name.strip():
            out.append(Problem(f"{p}.name", "must not be empty"))
        if m.name in names:
            out.append(Problem(f"{p}.name", f"duplicate manager name {m.name!r}"))
        names.add(m.name)
        for j, w in enumerate(m.workers):
            wp = f"{p}.workers[{j}]"
            _range(out, f"{wp}.queue_depth", w.queue_depth, 1, MAX_QUEUE_DEPTH, "outstanding I/Os")
            _range(out, f"{wp}.max_size", w.max_size, 0, 1 << 62, "sectors")
            _range(out, f"{wp}.start_sector", w.start_sector, 0, 1 << 62, "sectors")
            _range(out, f"{wp}.data_pattern", w.data_pattern, 0, len(DATA_PATTERNS) - 1)
            _choice(out, f"{wp}.kind", w.kind, ("disk", "network_tcp", "network_vi"))
            for k, name in enumerate(w.specs):
                if name != IDLE and plan.spec(name) is None:
                    out.append(
                        Problem(f"{wp}.specs[{k}]", f"assigned spec {name!r} is not defined in the plan")
                    )
            for k, t in enumerate(w.targets):
                if not t.name.strip() and not (t.path or "").strip():
                    out.append(Problem(f"{wp}.targets[{k}]", "needs a name or a path"))
                if t.port is not None:
                    _range(out, f"{wp}.targets[{k}].port", t.port, MIN_NET_PORT, 65535, "TCP port")
                    if t.port in ports:
                        out.append(
                            Problem(
                                f"{wp}.targets[{k}].port",
                                f"port {t.port} is also fixed for "
                                f"{ports[t.port]}: two listeners on one port would share its "
                                "connections; give each network target its own port",
                            )
                        )
                    ports.setdefault(t.port, f"{m.name!r} / {w.name!r}")
    return out

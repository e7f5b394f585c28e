"""Before/after comparison of stored runs: steps matched, changes per metric, noise, and what differs.

A *side* is a baseline or a candidate: one run, or several runs given as a group (their mean is compared).
Steps are matched by what they are: the access specification's definition (its lines: size, % of size,
% reads, % random, delay, burst, alignment, reply), the queue depth and the numbers of workers and targets.
A name is only a label: the same name with different definitions never pairs (``why_not_compared`` says
so), the same definition under different names pairs (the row notes the names). Steps stored without
their definition are matched by name. ``match="auto"`` (the default) pairs equal loads first, then the
remaining steps by definition and place in the sequence, so a queue-depth change (64 -> 8) still compares and
``what_changed`` leads with it; ``match="exact"`` pairs equal loads only, ``match="spec"`` by definition alone.
Steps found on one side only are listed, never dropped.

A step that did not run to its end (stopped, failed, partial) on either side is paired and shown, marked,
but its changes get the verdict "incomplete" and are left out of findings unless ``include_incomplete``.

Noise: where a side has repeated runs - a group given by the user, or runs found in the store with the
same plan hash and the same tags (``run_groups.find_repeats``) - a change counts only if it is larger than
``NOISE_K`` times the larger coefficient of variation of the two sides (per step and metric). Otherwise the
user's threshold (default 5 %) applies. Changes within the threshold are "same" and not marked.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from app.analysis.iometer_import import is_iometer_run
from app.analysis.preconditioning import measured_steps
from app.analysis.stored_plan import stored_plan
from app.model.metrics import Metrics
from app.model.plan import URING_OPTIONS
from app.model.spec_words import canonical_definition, definition_summary, spec_text
from app.store.records import Run, StepInfo

DEFAULT_THRESHOLD_PCT = 5.0
NOISE_K = 2.0  # a change must exceed two coefficients of variation (roughly two standard deviations)
# Repeats that agree exactly (or a metric fio rounds, like a maximum) would make any change "real";
# below this a change is noise whatever the repeats say.
MIN_NOISE_PCT = 1.0
MATCH_MODES = ("auto", "exact", "spec")
DEFAULT_MATCH = "auto"
COMPLETE = "complete"


@dataclass(frozen=True)
class MetricDef:
    key: str
    label: str
    unit: str
    higher_is_better: bool
    value: Callable[[Metrics], float | None]
    short: str  # column title where space is tight


METRICS: tuple[MetricDef, ...] = (
    MetricDef("iops", "IOPS", "IOPS", True, lambda m: m.iops, "IOPS"),
    MetricDef("mbps", "MB/s", "MB/s", True, lambda m: m.mbps, "MB/s"),
    MetricDef("lat_mean_ms", "Average response time", "ms", False, lambda m: m.lat_mean_ms, "Avg ms"),
    MetricDef("lat_max_ms", "Maximum response time", "ms", False, lambda m: m.lat_max_ms, "Max ms"),
    MetricDef(
        "p99_ms",
        "99th percentile response time",
        "ms",
        False,
        lambda m: percentile_within_max(m, m.percentile_ms(99)),
        "p99 ms",
    ),
)
METRIC_BY_KEY = {m.key: m for m in METRICS}


def percentile_within_max(m: Metrics, ms: float | None) -> float | None:
    """A percentile as reported: fio takes it from a histogram bin's upper edge, which can lie above the
    largest response time measured; no percentile is shown above the maximum."""
    if ms is None or not m.lat_max_ms:
        return ms
    return min(ms, m.lat_max_ms)


@dataclass(frozen=True)
class StepKey:
    spec: str  # the name: a label, shown but not matched on where the definition is known
    queue_depth: int | None
    workers: int
    targets: int
    definition: str = ""  # the spec's lines (``spec_words.canonical_definition``); "" when not stored
    # "device" or "file" where the step's several targets are all one object (workers on one raw device): the
    # load says so ("4 workers on one device", not "4 workers, 4 targets"); words only, never matched on
    shared: str = field(default="", compare=False)

    @property
    def what(self) -> str:
        """What the step does: its definition, or its name where the definition is unknown."""
        return self.definition or "name:" + self.spec.casefold()

    @property
    def identity(self) -> tuple:
        """What pairs steps in an exact match: the definition and the load."""
        return (self.what, self.queue_depth, self.workers, self.targets)

    def describe(self) -> str:
        qd = "QD ?" if self.queue_depth is None else f"QD {self.queue_depth}"
        return (
            f"{qd}, {self.workers} worker{'s' * (self.workers != 1)}, {self.targets} target"
            f"{'s' * (self.targets != 1)}"
        )


def step_key(step: StepInfo, run: Run | None = None) -> StepKey:
    """``run``: the step's run, whose targets tell whether the step's targets are one object."""
    return StepKey(
        step.spec_name,
        step.queue_depth,
        len(step.active_workers),
        len(step.active_targets),
        canonical_definition(step.spec_text),
        one_object(step, run),
    )


DEVICE_PREFIXES = ("/dev/", "\\\\.\\")  # a raw device's path: Linux, Windows (\\.\PhysicalDrive1)


def one_object(step: StepInfo, run: Run | None) -> str:
    """ "device" or "file" where the step has several targets and every one is the same path on the same
    manager (the run's targets say); "" otherwise."""
    if run is None or len(step.active_targets) < 2:
        return ""
    paths = {(t.manager, t.key): t.path for t in run.targets}
    used = {(m, paths.get((m, key), "")) for m, key in (tuple(t) for t in step.active_targets)}
    if len(used) != 1:
        return ""
    path = next(iter(used))[1]
    if not path:
        return ""
    return "device" if path.startswith(DEVICE_PREFIXES) else "file"


def all_metrics(step: StepInfo) -> Metrics | None:
    return next((r.metrics for r in step.results if r.level == "all"), None)


@dataclass
class StepValues:
    """One step of a side: its (mean) values and, where repeats exist, their coefficient of variation."""

    key: StepKey
    occurrence: int  # the n-th step with this key in the run (0-based), for plans repeating a spec
    index: int  # step index in the side's first run
    values: dict[str, float | None]
    cv: dict[str, float | None]  # fraction, e.g. 0.03; None without repeats
    runs: int  # how many runs the values are the mean of
    status: str = COMPLETE  # complete, or how the step ended early in any run of the side (stopped, failed)

    @property
    def complete(self) -> bool:
        return self.status == COMPLETE


@dataclass
class Side:
    runs: list[Run]  # the runs given; several = a group, compared by their mean
    repeats: list[Run] = field(
        default_factory=list
    )  # runs the spread comes from (the group or found siblings)
    steps: list[StepValues] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # steps without results

    @property
    def ids(self) -> list[int]:
        return [r.id for r in self.runs]

    @property
    def label(self) -> str:
        if len(self.runs) == 1:
            return f"Run {self.runs[0].id}"
        return f"Mean of runs {', '.join(str(i) for i in self.ids)}"

    @property
    def name(self) -> str:
        names = list(dict.fromkeys(r.name for r in self.runs))
        return " / ".join(names)


def _cv(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / abs(mean) if mean else None


# (identity, occurrence) -> (index, key, values, status)
Keyed = dict[tuple[tuple, int], tuple[int, StepKey, dict[str, float | None], str]]


def _keyed_steps(run: Run, iometer: bool) -> tuple[Keyed, list[str]]:
    out: Keyed = {}
    missing: list[str] = []
    seen: dict[tuple, int] = {}
    for step in measured_steps(run):  # preconditioning is not compared
        m = all_metrics(step)
        if m is None:
            missing.append(
                f"run {run.id} step {step.index + 1} ({step.spec_name}) has no results ({step.status})"
            )
            continue
        key = step_key(step, run)
        occurrence = seen.get(key.identity, 0)
        seen[key.identity] = occurrence + 1
        values = {d.key: d.value(m) for d in METRICS}
        if iometer:
            values["p99_ms"] = None  # Iometer's latency bins give no usable percentile
        status = step.status if step.status in ("stopped", "failed", "partial", "interrupted") else COMPLETE
        out[(key.identity, occurrence)] = (step.index, key, values, status)
    return out, missing


def build_side(runs: list[Run], repeats: list[Run] | None = None) -> Side:
    """A side from the runs given. With several runs, values are their means and their spread is the noise;
    with one run and ``repeats`` (runs of the same plan and tags, the run itself included) the run's own
    values are compared and the repeats give the noise."""
    side = Side(runs=list(runs))
    keyed = []
    for r in runs:
        steps, missing = _keyed_steps(r, is_iometer_run(r))
        keyed.append(steps)
        side.missing += missing
    spread_runs = list(runs) if len(runs) > 1 else list(repeats or [])
    side.repeats = spread_runs if len(spread_runs) > 1 else []
    spread = [_keyed_steps(r, is_iometer_run(r))[0] for r in side.repeats]
    for k, (index, key, _, _) in keyed[0].items():
        present = [s[k][2] for s in keyed if k in s]
        status = next((s[k][3] for s in keyed if k in s and s[k][3] != COMPLETE), COMPLETE)
        values: dict[str, float | None] = {}
        cv: dict[str, float | None] = {}
        for d in METRICS:
            vals = [v[d.key] for v in present if v[d.key] is not None]
            values[d.key] = statistics.fmean(vals) if len(vals) == len(present) and vals else None
            rep = [s[k][2][d.key] for s in spread if k in s and s[k][2][d.key] is not None]
            cv[d.key] = _cv(rep)  # type: ignore[arg-type]
        side.steps.append(StepValues(key, k[1], index, values, cv, len(present), status))
    return side


@dataclass
class Change:
    metric: MetricDef
    baseline: float | None
    candidate: float | None
    change: float | None
    change_pct: float | None
    threshold_pct: float
    from_repeats: bool  # the threshold came from the spread of repeated runs, not the user's threshold
    verdict: str  # better | worse | same | n/a | incomplete (a side's step did not run to its end)


def judge(
    d: MetricDef, base: float | None, cand: float | None, threshold_pct: float, from_repeats: bool = False
) -> Change:
    """The change from base to cand, and whether it is better, worse, or within the threshold."""
    if base is None or cand is None:
        return Change(d, base, cand, None, None, threshold_pct, from_repeats, "n/a")
    change = cand - base
    pct = change / base * 100 if base else None
    if pct is None:
        verdict = "same" if change == 0 else ("better" if (change > 0) == d.higher_is_better else "worse")
    elif abs(pct) <= threshold_pct:
        verdict = "same"
    else:
        verdict = "better" if (pct > 0) == d.higher_is_better else "worse"
    return Change(d, base, cand, change, pct, threshold_pct, from_repeats, verdict)


@dataclass
class MatchedStep:
    baseline: StepValues
    candidate: StepValues
    differs: list[str]  # what differs between the two steps: "QD 64 -> 16" (match="spec"), the names
    changes: dict[str, Change]
    # per metric (iops, mbps): the larger per-second spread (% of mean) of the two sides' steps, where both are
    # single runs with per-second samples (analysis.compare_spread); the confidence of a single pair rests on it
    spread_pct: dict[str, float] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        return self.baseline.key.spec

    @property
    def incomplete(self) -> list[str]:
        """How a side's step ended early: ["stopped in the baseline"]; [] when both ran to their end."""
        return [
            f"{s.status} in the {name}"
            for s, name in ((self.baseline, "baseline"), (self.candidate, "candidate"))
            if not s.complete
        ]

    @property
    def load(self) -> str:
        """The load the row was measured at: "QD 32", "QD 64 -> 8", with workers and targets where not 1."""
        a, b = self.baseline.key, self.candidate.key
        shared = a.shared if a.shared == b.shared else ""
        return load_text(a.queue_depth, b.queue_depth, a.workers, b.workers, a.targets, b.targets, shared)


def _planned_definitions(run: Run) -> set[str]:
    """The definitions of the access specifications the run's stored plan gives its workers."""

    plan = stored_plan(run)
    if plan is None:
        return set()
    used = {n for m in plan.managers for w in m.workers for n in w.specs}
    return {canonical_definition(spec_text([sp])) for sp in plan.specs if sp.name in used}


def planned_not_run(side: Side, k: StepKey) -> str:
    """Why a definition planned on a side has no step there at this load: its run ended before the step
    ("the other side's run 7 was stopped after 3 of its steps, before this one"); "" otherwise."""
    for run in side.runs:
        if run.status != COMPLETE and k.definition and k.definition in _planned_definitions(run):
            done = len(run.steps)
            return (
                f"planned in the other side too, but its run {run.id} was {run.status} after {done} "
                f"step{'s' if done != 1 else ''}, before this one"
            )
    return ""


@dataclass
class Comparison:
    baseline: Side
    candidate: Side
    rows: list[MatchedStep]
    only_baseline: list[StepValues]
    only_candidate: list[StepValues]
    differences: list[str]  # facts that differ between the sides: fio version, hosts, targets ...
    threshold_pct: float
    match: str
    include_incomplete: bool = False
    fact_changes: list[tuple[str, str, str]] = field(default_factory=list)  # (fact, baseline, candidate)

    @property
    def what_changed(self) -> list[str]:
        """What differs between the two sides, load first: "queue depth 64 → 8", then the run facts
        ("fio version: fio 3.33 → fio 3.35")."""
        return (
            load_changes(self.rows)
            + definition_changes(self.only_baseline, self.only_candidate)
            + [f"{lower_word(k)} {b} {ARROW} {c}" for k, b, c in self.fact_changes]
        )

    def why_not_compared(self, step: StepValues) -> str:
        """Why a step of one side (in ``only_baseline`` or ``only_candidate``) has no counterpart."""
        mine, other = (
            ("baseline", self.candidate)
            if any(s is step for s in self.only_baseline)
            else ("candidate", self.baseline)
        )
        other_name = "the candidate" if mine == "baseline" else "the baseline"
        k = step.key
        named = [
            s for s in other.steps if s.key.spec.casefold() == k.spec.casefold() and s.key.what != k.what
        ]
        if named:
            return (
                f"same name, different definition: {definition_summary(k.definition)} here, "
                f"{definition_summary(named[0].key.definition)} in {other_name}"
            )
        ended = planned_not_run(other, k)
        if ended:
            return ended.replace("the other side", other_name)
        same = [s for s in other.steps if s.key.what == k.what]
        if same:
            loads = ", ".join(dict.fromkeys(s.key.describe() for s in same))
            if self.match == "exact" and all(s.key.identity != k.identity for s in same):
                return f"{other_name} runs this definition only at {loads}"
            return f"{other_name} runs this step fewer times"
        if not k.definition:
            return f"no step named {k.spec!r} in {other_name} (this step's definition was not stored)"
        return f"{other_name} has no step with this definition ({definition_summary(k.definition)})"

    @property
    def load_differs(self) -> bool:
        """Some unpaired steps have the same definition on the other side, at another load."""
        whats = {s.key.what for s in self.only_candidate}
        return self.match == "exact" and any(s.key.what in whats for s in self.only_baseline)

    @property
    def nothing_in_common(self) -> bool:
        return not self.rows

    @property
    def noise_from_repeats(self) -> bool:
        return any(c.from_repeats for r in self.rows for c in r.changes.values())


ARROW = "\u2192"
# What a dimension of a step's load is called in "What changed".
LOAD_WORDS = (("queue depth", "queue_depth"), ("workers", "workers"), ("targets", "targets"))


def lower_word(word: str) -> str:
    """ "Hosts" -> "hosts"; "OS" and "I/O engine" stay."""
    return word if word.split()[0].isupper() else word[:1].lower() + word[1:]


def _q(v: int | None) -> str:
    return "?" if v is None else str(v)


def load_text(
    qa: int | None, qb: int | None, wa: int = 1, wb: int = 1, ta: int = 1, tb: int = 1, shared: str = ""
) -> str:
    """ "QD 32"; "QD 64 -> 8" where the sides differ; workers and targets where not 1 or where they differ;
    ``shared`` ("device", "file"): the targets are all one object, "QD 1, 4 workers on one device"."""
    parts = [f"QD {_q(qa)}" if qa == qb else f"QD {_q(qa)} {ARROW} {_q(qb)}"]
    for word, a, b in (("worker", wa, wb), ("target", ta, tb)):
        if a != b:
            parts.append(f"{word}s {a} {ARROW} {b}")
        elif word == "target" and shared and a > 1:
            on = f" on one {shared}"
            parts[-1:] = [parts[-1] + on] if wa == wb and wa == a else [*parts[-1:], f"{a} targets{on}"]
        elif a != 1:
            parts.append(f"{a} {word}s")
    return ", ".join(parts)


def definition_changes(only_b: list[StepValues], only_c: list[StepValues]) -> list[str]:
    """An access specification of the same name whose definition changed, the parts that differ named:
    "“Random 8k mix” 65% read → 66% read" (such steps are not paired, so the change must be said)."""
    out = []
    for b in only_b:
        named = [
            c for c in only_c if c.key.spec.casefold() == b.key.spec.casefold() and c.key.what != b.key.what
        ]
        if not named:
            continue
        x, y = definition_summary(b.key.definition), definition_summary(named[0].key.definition)
        px, py = x.split(", "), y.split(", ")
        if len(px) == len(py) and " + " not in x + y:
            x, y = (
                ", ".join(a for a, c in zip(px, py, strict=True) if a != c),
                ", ".join(c for a, c in zip(px, py, strict=True) if a != c),
            )
        out.append(f"\u201c{b.key.spec}\u201d {x} {ARROW} {y}")
    return list(dict.fromkeys(out))


def load_changes(rows: list[MatchedStep]) -> list[str]:
    """The load differences of the paired steps, one line per dimension: "queue depth 64 → 8";
    "queue depth 64 → 8 (2 of 4 steps)"; several pairs joined: "queue depth 1 → 2, 32 → 64"."""
    out = []
    for word, attr in LOAD_WORDS:
        pairs = [(getattr(r.baseline.key, attr), getattr(r.candidate.key, attr)) for r in rows]
        diff = [p for p in pairs if p[0] != p[1]]
        if not diff:
            continue
        distinct = list(dict.fromkeys(diff))
        text = f"{word} " + ", ".join(f"{_q(a)} {ARROW} {_q(b)}" for a, b in distinct[:4])
        if len(distinct) > 4:
            text += f" \u2026 ({len(distinct)} pairs)"
        if len(diff) < len(pairs):
            text += f" ({len(diff)} of {len(pairs)} steps)"
        out.append(text)
    renamed = list(
        dict.fromkeys(
            (r.baseline.key.spec, r.candidate.key.spec)
            for r in rows
            if r.baseline.key.spec.casefold() != r.candidate.key.spec.casefold()
        )
    )
    if renamed:
        out.append(
            "access specification names "
            + ", ".join(f"\u201c{a}\u201d {ARROW} \u201c{b}\u201d" for a, b in renamed[:3])
        )
    return out


def _differs(a: StepKey, b: StepKey) -> list[str]:
    out = []
    if a.spec.casefold() != b.spec.casefold():
        out.append(f"named {b.spec!r} in the candidate")
    if a.queue_depth != b.queue_depth:
        out.append(
            f"QD {a.queue_depth if a.queue_depth is not None else '?'} -> "
            f"{b.queue_depth if b.queue_depth is not None else '?'}"
        )
    if a.workers != b.workers:
        out.append(f"workers {a.workers} -> {b.workers}")
    if a.targets != b.targets:
        out.append(f"targets {a.targets} -> {b.targets}")
    return out


def _keys(steps: list[StepValues], match: str) -> list[tuple[tuple, StepValues]]:
    """Match keys: the step's identity (definition and load) and its occurrence, or (spec) the definition
    and its n-th appearance."""
    if match == "exact":
        return [((s.key.identity, s.occurrence), s) for s in steps]
    counts: dict[str, int] = {}
    out = []
    for s in steps:
        what = s.key.what
        counts[what] = counts.get(what, 0) + 1
        out.append(((what, counts[what]), s))
    return out


def match_steps(
    base: list[StepValues], cand: list[StepValues], match: str = DEFAULT_MATCH
) -> tuple[list[tuple[StepValues, StepValues]], list[StepValues], list[StepValues]]:
    """Pairs in baseline order, then the baseline's and the candidate's unmatched steps. ``auto``: equal
    definition and load first, then what is left by definition and place in the sequence."""
    if match not in MATCH_MODES:
        raise ValueError(f"match {match!r} is not one of {MATCH_MODES}")
    if match == "auto":
        pairs, only_base, rest = match_steps(base, cand, "exact")
        more, only_base, rest = match_steps(only_base, rest, "spec")
        order = {id(b): i for i, b in enumerate(base)}
        return sorted(pairs + more, key=lambda p: order[id(p[0])]), only_base, rest
    pool: dict[tuple, list[StepValues]] = {}
    keyed, base_keys = _keys(cand, match), _keys(base, match)
    for k, s in keyed:
        pool.setdefault(k, []).append(s)
    pairs, only_base = [], []
    for k, s in base_keys:
        if pool.get(k):
            pairs.append((s, pool[k].pop(0)))
        else:
            only_base.append(s)
    rest = [c for c in cand if id(c) not in {id(c) for _, c in pairs}]
    for b in list(only_base):  # a step stored without its definition (an older import) pairs by name
        c = next(
            (
                c
                for c in rest
                if not (b.key.definition and c.key.definition)
                and c.key.spec.casefold() == b.key.spec.casefold()
                and (match == "spec" or c.key.identity[1:] == b.key.identity[1:])
            ),
            None,
        )
        if c is not None:
            pairs.append((b, c))
            only_base.remove(b)
            rest.remove(c)
    order = {id(b): i for i, b in enumerate(base)}
    return sorted(pairs, key=lambda p: order[id(p[0])]), only_base, rest


def compare(
    baseline: Side,
    candidate: Side,
    *,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    match: str = DEFAULT_MATCH,
    facts: Callable[[Run], dict[str, set[str]]] | None = None,
    include_incomplete: bool = False,
) -> Comparison:
    pairs, only_b, only_c = match_steps(baseline.steps, candidate.steps, match)
    rows = []
    for b, c in pairs:
        changes = {}
        for d in METRICS:
            cvs = [v for v in (b.cv[d.key], c.cv[d.key]) if v is not None]
            threshold = max(NOISE_K * max(cvs) * 100, MIN_NOISE_PCT) if cvs else threshold_pct
            changes[d.key] = judge(d, b.values[d.key], c.values[d.key], threshold, bool(cvs))
            if not (b.complete and c.complete) and not include_incomplete and changes[d.key].verdict != "n/a":
                changes[d.key].verdict = "incomplete"
        rows.append(MatchedStep(b, c, _differs(b.key, c.key), changes))
    pairs_of_facts = fact_pairs(baseline.runs, candidate.runs, facts or run_facts)
    return Comparison(
        baseline,
        candidate,
        rows,
        only_b,
        only_c,
        [f"{k}: baseline {b}; candidate {c}" for k, b, c in pairs_of_facts],
        threshold_pct,
        match,
        include_incomplete,
        pairs_of_facts,
    )


# A step without a time limit (a size-based transfer) is stored with a run time of a year or so.
NO_TIME_LIMIT_S = 30 * 86400
# Job options that describe the engine, not the load or the file (those are compared elsewhere).
ENGINE_OPTIONS = (
    "direct",
    "buffered",
    "sync",
    "fsync",
    "end_fsync",
    "invalidate",
    "norandommap",
    "randrepeat",
    "random_generator",
    "refill_buffers",
    "buffer_compress_percentage",
    "time_based",
    "thread",
)


def run_time_text(run_s: float, ramp_s: float = 0.0) -> str:
    text = "until done (no time limit)" if run_s >= NO_TIME_LIMIT_S else f"{run_s:g} s"
    return text + (f" + {ramp_s:g} s ramp-up" if ramp_s else "")


def io_engines(run: Run) -> set[str]:
    """The I/O engine of each stored job file, with its io_uring options: {"io_uring (fixedbufs, hipri)"}."""
    out: set[str] = set()
    for step in run.steps:
        for o in step.outputs.values():
            name, options, section = "", [], ""
            for line in (o.job_text or "").splitlines():
                key, _, value = line.strip().partition("=")
                if key.startswith("["):
                    section = key.strip("[]")
                elif section == "global" and key.strip() == "ioengine":
                    name = value.strip()
                elif section == "global" and key.strip() in URING_OPTIONS:
                    options.append(key.strip())
            if name:
                out.add(name + (f" ({', '.join(dict.fromkeys(options))})" if options else ""))
    return out


def job_facts(run: Run) -> tuple[set[str], set[str]]:
    """(engine options other than the engine itself, test-file sizes) from the fio job files stored with the
    run's steps."""
    engine: set[str] = set()
    sizes: set[str] = set()
    for step in run.steps:
        for out in step.outputs.values():
            section = ""
            for line in (out.job_text or "").splitlines():
                line = line.strip()
                if line.startswith("["):
                    section = line.strip("[]")
                    continue
                key, _, value = line.partition("=")
                key, value = key.strip(), value.strip()
                if key in ENGINE_OPTIONS and section == "global":
                    engine.add(f"{key}={value}")
                elif key == "size" and value:
                    sizes.add(_size_text(value))
    return engine, sizes


def _size_text(value: str) -> str:
    from app.model.units import format_bytes

    return format_bytes(int(value)) if value.isdigit() else value


def run_facts(run: Run) -> dict[str, set[str]]:
    """What a comparison must not hide when it differs: the measuring tool, hosts, OS, targets, test-file size,
    engine options, step times, notes and tags."""
    tool = run.host.get("tool")
    if tool:
        tools = {f"{tool} {run.host.get('tool_version', '')}".strip()}
    else:
        tools = {f"fio {v}" for v in run.fio_versions} or {"fio (version unknown)"}
    hosts = set()
    for m in run.managers:
        if tool:
            hosts.add(m.address or m.name)
        elif m.address in ("", "local"):
            hosts.add(str(run.host.get("hostname") or "this machine"))
        else:
            hosts.add(m.address.rsplit(":", 1)[0])
    os_text = " ".join(str(run.host.get(k)) for k in ("os", "kernel") if run.host.get(k))
    targets = {t.path or t.name for t in run.targets}
    times = {run_time_text(s.run_s, s.ramp_s) for s in measured_steps(run) if s.results}
    engine, sizes = job_facts(run)
    facts = {
        "Measured with": tools,
        "Hosts": hosts,
        "OS": {os_text} if os_text else set(),
        "Targets": targets,
        "Test-file size": sizes,
        "I/O engine": {" / ".join(sorted(engines))} if (engines := io_engines(run)) else set(),
        "Engine options": {", ".join(sorted(engine))} if engine else set(),
        "Run time per step": times,
        **target_settings(run),
    }
    facts["Notes"] = {run.notes.strip()} if run.notes.strip() else set()
    facts["Tags"] = {", ".join(run.tags)} if run.tags else set()
    return facts


# What the environment table shows of a target that changes how it performs: (fact, environment key).
TARGET_SETTINGS = (
    ("I/O scheduler", "scheduler"),
    ("Mount options", "mount_options"),
    ("Queue settings", "queue_settings"),
)


def target_settings(run: Run) -> dict[str, set[str]]:
    """The targets' scheduler, mount options and queue settings (named by target where a run has several)."""
    out: dict[str, set[str]] = {fact: set() for fact, _ in TARGET_SETTINGS}
    for t in run.targets:
        env = t.details.get("environment") or {}
        for fact, key in TARGET_SETTINGS:
            if env.get(key):
                out[fact].add(f"{t.name}: {env[key]}" if len(run.targets) > 1 else str(env[key]))
    return out


def fact_pairs(
    base: list[Run], cand: list[Run], facts: Callable[[Run], dict[str, set[str]]]
) -> list[tuple[str, str, str]]:
    """(fact, baseline's value, candidate's value) for each fact that differs, in the facts' order."""

    def union(runs: list[Run]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for r in runs:
            for k, v in facts(r).items():
                out.setdefault(k, set()).update(v)
        return out

    b, c = union(base), union(cand)
    order = list(facts(base[0]).keys()) if base else []
    keys = sorted(b.keys() | c.keys(), key=lambda k: order.index(k) if k in order else 99)
    return [
        (k, ", ".join(sorted(b.get(k, set()))) or "-", ", ".join(sorted(c.get(k, set()))) or "-")
        for k in keys
        if b.get(k, set()) != c.get(k, set())
    ]


def fact_differences(
    base: list[Run], cand: list[Run], facts: Callable[[Run], dict[str, set[str]]]
) -> list[str]:
    return [f"{k}: baseline {b}; candidate {c}" for k, b, c in fact_pairs(base, cand, facts)]

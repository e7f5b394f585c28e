"""The executive summary in words (Qt-free): what changed between the sides, then the findings - one line per
workload (access specification definition), each with its load point and confidence, ranked by the size of
the change - then what stayed within noise and what was left out.

"What changed: queue depth 64 → 8"
"Random-8k-70%Read: IOPS +38.0 % at QD 32 (12,345 → 17,012; p99 −40.0 %); confidence high."
"Sequential 1M write: MB/s −96.0 % at every queue depth (QD 1 to 32); confidence high."
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.analysis.compare import (
    METRIC_BY_KEY,
    METRICS,
    Change,
    Comparison,
    MatchedStep,
    MetricDef,
    lower_word,
)
from app.model.spec_words import parse_spec_text
from app.report.facts import environment_rows
from app.report.tables import MINUS, fmt_sig, side_title
from app.store.records import Run

ARROW = "\u2192"
LARGE_TRANSFER = 64 * 1024  # at or above this, a workload is judged by MB/s; below by IOPS
MAX_FINDINGS = 12  # a screen: the tables follow with everything


@dataclass
class SummaryBlock:
    """What one comparison says: what changed, the findings, what stayed, what was left out."""

    heading: str  # e.g. "after (runs 4, 5, 6) compared with before (runs 1, 2, 3)"
    what_changed: list[str] = field(default_factory=list)  # "queue depth 64 → 8", "hosts lab1 → lab2"
    sentences: list[str] = field(default_factory=list)  # the findings, largest change first
    unchanged: str = ""  # "Within noise: ..."; "" when everything changed
    left_out: list[str] = field(default_factory=list)  # incomplete steps, not judged
    warning: list[str] = field(default_factory=list)  # the run facts that differ, "fact: label: x; label: y"
    headlines: list[str] = field(
        default_factory=list
    )  # sweep maxima, transfer times, steady state before/after
    noise: str = ""  # how noise and confidence were judged
    # Section hook for validity notes (issue 30): lines a validity check adds about this comparison (e.g. "the
    # candidate's cache was warm"); every format renders them under "Validity" when there are any.
    validity: list[str] = field(default_factory=list)


def _value(ch: Change, v: float | None) -> str:
    unit = "" if ch.metric.unit in ("IOPS", "MB/s") else f" {ch.metric.unit}"
    return fmt_sig(v) + unit


def pct_text(p: float | None) -> str:
    if p is None:
        return "from zero"
    return f"{MINUS if p < 0 else '+'}{abs(p):,.1f} %"


def phrase(ch: Change) -> str:
    """ "IOPS up 38.0 % (12,345 → 17,012)"."""
    direction = "up" if (ch.change or 0) > 0 else "down"
    pct = f"{abs(ch.change_pct):,.1f} %" if ch.change_pct is not None else "from zero"
    return (
        f"{ch.metric.label} {direction} {pct} ({_value(ch, ch.baseline)} {ARROW} {_value(ch, ch.candidate)})"
    )


def row_name(r: MatchedStep) -> str:
    """The spec and its load: "Random-8k-70%Read at QD 64 → 8"."""
    return f"{r.spec} at {r.load}"


def changed(r: MatchedStep) -> list[Change]:
    return [r.changes[d.key] for d in METRICS if r.changes[d.key].verdict in ("better", "worse")]


def sentence(r: MatchedStep) -> str | None:
    """Every metric of one row that changed beyond noise (the tables' caption); None when none did."""
    parts = [phrase(ch) for ch in changed(r)]
    if not parts:
        return None
    parts = [parts[0]] + [
        p[0].lower() + p[1:] if not p.startswith(("IOPS", "MB/s")) else p for p in parts[1:]
    ]
    return f"{row_name(r)}: " + ", ".join(parts) + "."


def headline_metric(r: MatchedStep) -> MetricDef:
    """MB/s for large transfers (64 KiB and up, by the definition's main line), IOPS otherwise."""
    specs = parse_spec_text(r.baseline.key.definition) or []
    lines = [ln for lines in specs for ln in lines]
    if lines and max(lines, key=lambda ln: ln.of_size).size >= LARGE_TRANSFER:
        return METRIC_BY_KEY["mbps"]
    return METRIC_BY_KEY["iops"]


SPREAD_HIGH = 5.0  # one run each side: "high" only for a change this many times the per-second spread


def confidence(ch: Change, spread: float | None = None) -> str:
    """high / medium / low: how far the change is beyond the noise. With repeated runs, the noise is their
    run-to-run variation. With one run each side, ``spread`` (the steps' per-second spread, %) stands in:
    high for a change ``SPREAD_HIGH`` times the spread and twice the threshold, medium for one beyond the
    spread, low inside it (a +8.6 % change six times a ±1.4 % spread is medium, not low); without per-second
    samples a single pair is never high: medium from twice the threshold, else low. ``confidence_rule`` and
    ``noise_text`` say the same in words."""
    size = abs(ch.change_pct or 0)
    t = ch.threshold_pct
    if ch.from_repeats:
        return "high" if size >= 2 * t else "medium"
    if spread is None:
        return "medium" if size >= 2 * t else "low"
    if size >= SPREAD_HIGH * spread and size >= 2 * t:
        return "high"
    return "medium" if size >= spread else "low"


def confidence_text(ch: Change, r: MatchedStep) -> str:
    """ "confidence medium (one run each side; per-second spread ±12.3 %)"; with repeats "confidence high"."""
    if ch.from_repeats:
        return f"confidence {confidence(ch)}"
    spread = r.spread_pct.get(ch.metric.key)
    why = f"per-second spread \u00b1{spread:.1f} %" if spread is not None else "too few per-second samples"
    return f"confidence {confidence(ch, spread)} (one run each side; {why})"


def confidence_rule(c: Comparison) -> str:
    """How confidence is decided, in words (the summary's noise line and the disclosure appendix)."""
    if c.noise_from_repeats:
        return (
            "Confidence: a change counts when it exceeds twice the larger run-to-run variation of the "
            "repeated runs (by specification and metric); it is high at twice that or more, else medium."
        )
    t = c.threshold_pct
    return (
        f"Confidence with one run each side: there is no run-to-run variation to measure, so each step's "
        f"per-second samples stand in - their spread (one standard deviation of the per-second rate, as % of "
        f"its mean; the larger of the two sides) says how far the rate wandered within the run. A change "
        f"beyond {t:g} % is high confidence when it is at least {SPREAD_HIGH:g} times that spread and "
        f"{2 * t:g} % or more; medium when it exceeds the spread; low when it is within it. With fewer than "
        f"three per-second samples (a step of two seconds, imported results) a single pair is medium from "
        f"{2 * t:g} % and low below. Repeated runs "
        f"(the same plan and tags, or groups such as 1,2,3) measure the noise between runs and decide instead."
    )


def _latency_note(r: MatchedStep) -> str:
    for key, name in (("p99_ms", "p99"), ("lat_mean_ms", "average response time")):
        ch = r.changes[key]
        if ch.verdict in ("better", "worse"):
            return f"; {name} {pct_text(ch.change_pct)}"
    return ""


def _loads(rows: list[MatchedStep]) -> str:
    qds = sorted(
        {q for r in rows for q in (r.baseline.key.queue_depth, r.candidate.key.queue_depth) if q is not None}
    )
    if len(rows) > 1 and len(qds) > 1:
        return f"at every queue depth (QD {qds[0]} to {qds[-1]})"
    return f"at {rows[0].load}" if len(rows) == 1 else "at every load"


@dataclass
class Finding:
    text: str
    size: float  # the largest |change %|: findings are ranked by it


def workload_finding(rows: list[MatchedStep]) -> Finding | None:
    """One workload (rows of one definition, several loads): its headline metric's change beyond noise."""
    d = headline_metric(rows[0])
    judged = [(r, r.changes[d.key]) for r in rows if r.changes[d.key].verdict in ("better", "worse", "same")]
    real = [(r, ch) for r, ch in judged if ch.verdict in ("better", "worse")]
    if not real:
        return None
    big_r, big = max(real, key=lambda x: abs(x[1].change_pct or 0))
    name = rows[0].spec
    signs = {(ch.change or 0) > 0 for _, ch in real}
    if len(real) == len(judged) > 1 and len(signs) == 1:
        pcts = sorted(ch.change_pct or 0 for _, ch in real)
        span = (
            pct_text(pcts[0])
            if abs(pcts[-1] - pcts[0]) < 1
            else f"{pct_text(pcts[0])} to {pct_text(pcts[-1])}".replace(" % to", " to")
        )
        text = (
            f"{name}: {d.label} {span} {_loads(rows)} (largest at {big_r.load}: {_value(big, big.baseline)} "
            f"{ARROW} {_value(big, big.candidate)}{_latency_note(big_r)})"
        )
    else:
        parts = []
        for r, ch in sorted(real, key=lambda x: -abs(x[1].change_pct or 0))[:3]:
            parts.append(
                f"{pct_text(ch.change_pct)} at {r.load} ({_value(ch, ch.baseline)} {ARROW} "
                f"{_value(ch, ch.candidate)}{_latency_note(r)})"
            )
        text = f"{name}: {d.label} " + ", ".join(parts)
        if len(real) > 3:
            text += f" and {len(real) - 3} more loads"
        same = [r.load for r, ch in judged if ch.verdict == "same"]
        if same:
            text += "; within noise at " + ", ".join(same)
    return Finding(text + f"; {confidence_text(big, big_r)}.", abs(big.change_pct or 0))


def by_workload(rows: list[MatchedStep]) -> list[list[MatchedStep]]:
    groups: dict[str, list[MatchedStep]] = {}
    for r in rows:
        groups.setdefault(r.baseline.key.what, []).append(r)
    return list(groups.values())


def findings(c: Comparison) -> tuple[list[str], list[str]]:
    """(findings ranked by size, workloads within noise)."""
    found, quiet = [], []
    for rows in by_workload(c.rows):
        judged = [r for r in rows if not r.incomplete or c.include_incomplete]
        if not judged:
            continue
        f = workload_finding(judged)
        if f is None:
            d = headline_metric(judged[0])
            loads = judged[0].load if len(judged) == 1 else _loads(judged).removeprefix("at ")
            quiet.append(f"{judged[0].spec} ({d.label}, {loads})")
        else:
            found.append(f)
    found.sort(key=lambda f: -f.size)
    return [f.text for f in found], quiet


def _nothing_judged(c: Comparison) -> str:
    """What the summary says when no paired step could be judged, and why."""
    stopped = sum(1 for r in c.rows if r.incomplete)
    if stopped and not c.include_incomplete:
        return (
            f"Nothing was judged: {'the paired step' if stopped == 1 else f'all {stopped} paired steps'} did not "
            "run to its end on a side (stopped or partial; see “Left out”), so no change is claimed "
            "either way."
        )
    return "Nothing was judged: no paired step has a figure both sides measured, so no change is claimed."


def left_out(c: Comparison, base_label: str = "baseline", cand_label: str = "candidate") -> list[str]:
    if c.include_incomplete:
        return []
    return [
        f"{row_name(r)}: "
        + " and ".join(
            x.replace("the baseline", base_label).replace("the candidate", cand_label) for x in r.incomplete
        )
        + " - shown in the tables, left out of the findings"
        for r in c.rows
        if r.incomplete
    ]


def noise_text(c: Comparison) -> str:
    if c.noise_from_repeats:
        limits = [ch.threshold_pct for r in c.rows for ch in r.changes.values() if ch.from_repeats]
        text = (
            f"A change counts when it exceeds twice the larger run-to-run variation of the repeated runs "
            f"({min(limits):.1f} to {max(limits):.1f} % here, by specification and metric). Confidence: high "
            "at twice that or more, else medium."
        )
    else:
        t = c.threshold_pct
        text = (
            f"A change counts when it exceeds {t:g} % (one run each side: no repeats to measure noise). "
            f"Confidence: high when the change is {SPREAD_HIGH:g} times the steps' per-second spread or "
            f"more (and {2 * t:g} % or more), medium when it exceeds the spread, low within it (without "
            f"per-second samples: medium from {2 * t:g} %, low below); repeated runs measure the noise "
            "between runs."
        )
    return text + " Each workload is judged by IOPS below 64 KiB transfers, by MB/s from 64 KiB."


# Rows of the environment table whose differences the run facts (compare.run_facts) do not already name:
# "CPU", "Memory", a target's device (model, size) and file system, a timed transfer's bytes.
ENVIRONMENT_ONLY = ("CPU", "Memory", "device", "file system", "Transfer per step")


def environment_changes(c: Comparison) -> list[str]:
    """What the environment table shows differing that "What changed" would not otherwise say: "CPU AMD
    EPYC, 2 CPUs → Intel Xeon, 8 CPUs", "target: device virtio disk, 256 GiB → 512 GiB"."""

    def union(runs: list[Run]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for run in runs:
            for k, v in environment_rows(run):
                if v not in out.setdefault(k, []):
                    out[k].append(v)
        return out

    b, a = union(c.baseline.runs), union(c.candidate.runs)
    out = []
    for key in dict.fromkeys([*b, *a]):
        if key.rsplit(": ", 1)[-1] not in ENVIRONMENT_ONLY or b.get(key) == a.get(key):
            continue
        was, now = "; ".join(b.get(key, [])) or "-", "; ".join(a.get(key, [])) or "-"
        out.append(f"{lower_word(key)} {was} {ARROW} {now}")
    return out


def summarize(c: Comparison, base_label: str, cand_label: str) -> SummaryBlock:
    block = SummaryBlock(
        f"{side_title(c.candidate, cand_label)} compared with {side_title(c.baseline, base_label)}"
    )
    # the tags that name the sides are the labels already: not a change to report
    shown = [
        (k, b, v) for k, b, v in c.fact_changes if not (k == "Tags" and (b, v) == (base_label, cand_label))
    ]
    block.what_changed = (
        c.what_changed[: len(c.what_changed) - len(c.fact_changes)]
        + [f"{lower_word(k)} {b} {ARROW} {v}" for k, b, v in shown]
        + environment_changes(c)
    )
    block.what_changed = block.what_changed or [
        "nothing Fiometer records (same load, hosts, fio, settings): the change is in the system under test"
    ]
    found, quiet = findings(c)
    block.sentences = found[:MAX_FINDINGS]
    if len(found) > MAX_FINDINGS:
        block.sentences.append(f"... and {len(found) - MAX_FINDINGS} smaller changes (see the tables).")
    if c.nothing_in_common:
        block.sentences = [
            "No step of one side has the same access specification definition as a step of the "
            "other: nothing to compare (see \u201cNot compared\u201d)."
        ]
    elif not found and not quiet:
        block.sentences = [_nothing_judged(c)]
    elif not found:
        block.sentences = ["Nothing changed beyond noise."]
    if quiet:
        block.unchanged = "Within noise: " + "; ".join(quiet) + "."
    block.left_out = left_out(c, base_label, cand_label)
    block.warning = [f"{k}: {base_label}: {b}; {cand_label}: {v}" for k, b, v in c.fact_changes]
    block.noise = noise_text(c)
    return block


def summary_lines(block: SummaryBlock) -> list[tuple[str, str]]:
    """The block as (kind, text) lines in reading order, for the plain formats (terminal, CSV, XLSX):
    kind is what_changed | finding | headline | unchanged | left_out | validity | noise."""
    out = [("what_changed", "What changed: " + "; ".join(block.what_changed))] if block.what_changed else []
    out += [("finding", s) for s in block.sentences]
    out += [("headline", s) for s in block.headlines]
    if block.unchanged:
        out.append(("unchanged", block.unchanged))
    out += [("left_out", "Left out (incomplete): " + s) for s in block.left_out]
    out += [("validity", "Validity: " + s) for s in block.validity]
    out.append(("noise", block.noise))
    return out

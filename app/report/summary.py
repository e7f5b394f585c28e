"""The executive summary in words (Qt-free): per compared access specification, one sentence naming every
metric that changed beyond noise, with both values and the change; a line for what did not change; a
warning when the sides differ in more than the change under test.

"Random-8k-70%Read: IOPS up 38.0 % (12,345 → 17,012), average response time down 27.1 % (8.64 → 6.30 ms)."
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.analysis.compare import METRICS, Change, Comparison, MatchedStep
from app.report.tables import fmt_sig, side_title

ARROW = "\u2192"


@dataclass
class SummaryBlock:
    """What one comparison says: the headline, a sentence per changed spec, what stayed, what differs."""

    heading: str  # e.g. "after (runs 4, 5, 6) compared with before (runs 1, 2, 3)"
    sentences: list[str] = field(default_factory=list)
    unchanged: str = ""  # "" when everything changed
    warning: list[str] = field(default_factory=list)  # facts that differ besides the change under test
    noise: str = ""  # how noise was judged


def _value(ch: Change, v: float | None) -> str:
    unit = "" if ch.metric.unit in ("IOPS", "MB/s") else f" {ch.metric.unit}"
    return fmt_sig(v) + unit


def phrase(ch: Change) -> str:
    """"IOPS up 38.0 % (12,345 → 17,012)"; the metric's name starts lower-case after the first."""
    direction = "up" if (ch.change or 0) > 0 else "down"
    pct = f"{abs(ch.change_pct):,.1f} %" if ch.change_pct is not None else "from zero"
    return f"{ch.metric.label} {direction} {pct} ({_value(ch, ch.baseline)} {ARROW} {_value(ch, ch.candidate)})"


def row_name(r: MatchedStep) -> str:
    other = [x.replace(" -> ", f" {ARROW} ") for x in r.differs]
    return r.spec + (f" ({'; '.join(other)})" if other else "")


def changed(r: MatchedStep) -> list[Change]:
    return [r.changes[d.key] for d in METRICS if r.changes[d.key].verdict in ("better", "worse")]


def sentence(r: MatchedStep) -> str | None:
    """One sentence for a spec whose metrics changed beyond noise; None when none did."""
    parts = [phrase(ch) for ch in changed(r)]
    if not parts:
        return None
    parts = [parts[0]] + [p[0].lower() + p[1:] if not p.startswith(("IOPS", "MB/s")) else p for p in parts[1:]]
    return f"{row_name(r)}: " + ", ".join(parts) + "."


def unchanged_line(c: Comparison) -> str:
    steady = [row_name(r) for r in c.rows if not changed(r)
              and any(ch.verdict == "same" for ch in r.changes.values())]
    partly = any(ch.verdict == "same" for r in c.rows if changed(r) for ch in r.changes.values())
    out = []
    if steady:
        out.append(f"No change beyond noise in {', '.join(steady)}.")
    if partly:
        out.append("Metrics not named above stayed within noise.")
    return " ".join(out)


def noise_text(c: Comparison) -> str:
    if c.noise_from_repeats:
        limits = [ch.threshold_pct for r in c.rows for ch in r.changes.values() if ch.from_repeats]
        return (f"A change counts when it exceeds twice the larger run-to-run variation of the repeated runs "
                f"({min(limits):.1f} to {max(limits):.1f} % here, by specification and metric).")
    return f"A change counts when it exceeds {c.threshold_pct:g} % (no repeated runs to measure noise)."


def summarize(c: Comparison, base_label: str, cand_label: str) -> SummaryBlock:
    block = SummaryBlock(f"{side_title(c.candidate, cand_label)} compared with {side_title(c.baseline, base_label)}")
    block.sentences = [s for r in c.rows if (s := sentence(r))]
    if not c.rows:
        block.sentences = ["No access specification was measured on both sides: nothing to compare."]
    block.unchanged = unchanged_line(c)
    if c.rows and not block.sentences:
        block.unchanged = "Nothing changed beyond noise. " + block.unchanged.replace("No change beyond noise in ",
                                                                                     "Compared: ")
    block.warning = [d.replace(": baseline ", f": {base_label}: ", 1).replace("; candidate ", f"; {cand_label}: ", 1)
                     for d in c.differences]
    block.noise = noise_text(c)
    return block

"""How much a step's per-second rate varied within its run: the noise one run can show about itself.

With one run on each side there is no run-to-run variation to judge a change by. The per-second samples
of the step are the next best thing: their spread (one standard deviation, as % of their mean) says how far
the rate wandered while the step ran. A change several times that spread is unlikely to be wander alone.
"""

from __future__ import annotations

import statistics

from app.analysis.compare import Comparison, Side, StepValues
from app.store.database import Store

MIN_SAMPLES = 3  # fewer per-second samples say nothing about a spread
MIN_SECONDS = 0.5  # a shorter interval (the step's last, cut short) is not a per-second rate
RATES = {  # from (I/Os, bytes, seconds) of a per-second sample
    "iops": lambda ios, nbytes, sec: ios / sec,
    "mbps": lambda ios, nbytes, sec: nbytes / 1e6 / sec,
}


def spread_pct(rates: list[float]) -> float | None:
    """Standard deviation of the rates as % of their mean; None for too few or a zero mean."""
    if len(rates) < MIN_SAMPLES:
        return None
    mean = statistics.fmean(rates)
    return statistics.stdev(rates) / mean * 100 if mean > 0 else None


def step_spread(store: Store, step_id: int) -> dict[str, float]:
    """Per-second spread of IOPS and MB/s of one step (ALL level), over the seconds it did I/O: the
    seconds before its first I/O (test-file layout) and after its last are not part of the rate. The
    samples' counts are read as arrays (no histogram decoded: an hour's step in milliseconds)."""
    from app.engine.sampling.telemetry import ALL_KEY
    from app.store.queries import steps_interval_rates

    rows = steps_interval_rates(store, [step_id], "all", ALL_KEY).get(step_id, [])
    samples = [(ios or 0, nbytes or 0, sec) for _, ios, nbytes, sec in rows if (sec or 0) >= MIN_SECONDS]
    busy = [i for i, (ios, _, _) in enumerate(samples) if ios]
    if not busy:
        return {}
    samples = samples[busy[0] : busy[-1] + 1]
    out = {}
    for key, rate in RATES.items():
        s = spread_pct([rate(ios, nbytes, sec) for ios, nbytes, sec in samples])
        if s is not None:
            out[key] = s
    return out


def _side_spread(store: Store, side: Side, step: StepValues) -> dict[str, float]:
    if len(side.runs) != 1:  # a group: its runs' spread is the noise (compare.build_side)
        return {}
    by_index = {s.index: s for s in side.runs[0].steps}
    info = by_index.get(step.index)
    return step_spread(store, info.id) if info is not None else {}


def attach_spreads(store: Store, c: Comparison) -> None:
    """Set each row's ``spread_pct``: per metric (iops, mbps), the larger per-second spread of its two sides;
    a metric is left out when either side has no per-second samples for it."""
    for row in c.rows:
        a, b = _side_spread(store, c.baseline, row.baseline), _side_spread(store, c.candidate, row.candidate)
        row.spread_pct = {k: max(a[k], b[k]) for k in a.keys() & b.keys()}

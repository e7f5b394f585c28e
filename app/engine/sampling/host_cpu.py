"""How busy this host's CPUs were over a span (all processes, not only fio): Linux's /proc/stat; None elsewhere."""

from __future__ import annotations

from pathlib import Path

STAT = Path("/proc/stat")


def cpu_times() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot, or None where the system does not say."""
    try:
        first = STAT.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    ticks = [int(v) for v in first[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    steal = ticks[7] if len(ticks) > 7 else 0  # taken by the hypervisor: not ours to use
    total = sum(ticks[:8])
    return total - idle - steal, total - steal


def busy_pct(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] <= before[1]:
        return None
    return 100.0 * (after[0] - before[0]) / (after[1] - before[1])

"""An Iometer access specification as fio job options (docs/reference/iometer.md, "From access
specification to fio").

Single-line specs map directly. Multi-line specs become per-direction ``bssplit`` lists with
``rwmixread`` and per-direction ``percentage_random``: exact for the joint distribution of
direction and size, because fio picks the direction first and then a size from that direction's
list. Line weights are the line's ``% of size`` times its burst, as Iometer picks a line per burst.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.model.plan import AccessSpec, SpecLine
from app.model.units import fio_size


@dataclass
class _Weighted:
    line: SpecLine
    p: float  # probability that an I/O comes from this line


def _weights(spec: AccessSpec) -> list[_Weighted]:
    raw = [ln.of_size * max(ln.burst, 1) for ln in spec.lines]
    total = sum(raw)
    if total <= 0:
        return [_Weighted(ln, 1.0 / len(spec.lines)) for ln in spec.lines]
    return [_Weighted(ln, r / total) for ln, r in zip(spec.lines, raw, strict=True)]


def largest_remainder(weights: dict[int, float]) -> dict[int, int]:
    """Integer percentages that add up to exactly 100, keeping the order of keys; zero entries dropped."""
    total = sum(weights.values())
    if total <= 0:
        return {}
    exact = {k: 100.0 * v / total for k, v in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    short = 100 - sum(out.values())
    for k in sorted(exact, key=lambda k: exact[k] - out[k], reverse=True)[:short]:
        out[k] += 1
    return {k: v for k, v in out.items() if v > 0}


def _bssplit(entries: dict[int, int]) -> str:
    return ":".join(f"{fio_size(size)}/{pct}" for size, pct in sorted(entries.items()))


def _align_bytes(line: SpecLine, align_zero: int) -> int:
    return align_zero if line.align == 0 else line.align


def fixed_transfers(spec: AccessSpec) -> tuple[int | None, int | None]:
    """(read, write): the one transfer size every read (write) of ``spec`` has, or None where it has several
    (fio's ``bs``, or a ``bssplit`` list of one size for that direction). Telemetry counts that direction's
    completed I/Os as its completed bytes over that size, so that IOPS and MB/s of every sample agree."""
    ws = _weights(spec)
    sizes = {w.line.size for w in ws}
    if len(sizes) == 1:
        size = sizes.pop()
        return size, size
    reads = {w.line.size for w in ws if w.p * w.line.reads > 0}
    writes = {w.line.size for w in ws if w.p * (100 - w.line.reads) > 0}
    return (next(iter(reads)) if len(reads) == 1 else None, next(iter(writes)) if len(writes) == 1 else None)


def spec_options(spec: AccessSpec, align_zero: int) -> list[tuple[str, str]]:
    """fio options (name, value) for one job running this spec; ``align_zero``: the bytes Iometer's "align 0"
    (sector boundaries) means on the target (``geometry.Geometry.align``)."""
    ws = _weights(spec)
    read = sum(w.p * w.line.reads / 100 for w in ws)
    write = 1.0 - read
    rnd_read = sum(w.p * w.line.reads / 100 * w.line.random / 100 for w in ws) / read if read > 1e-12 else 0.0
    rnd_write = (
        sum(w.p * (1 - w.line.reads / 100) * w.line.random / 100 for w in ws) / write
        if write > 1e-12
        else 0.0
    )
    mix = round(100 * read)
    pct_r, pct_w = round(100 * rnd_read), round(100 * rnd_write)
    any_random = (mix > 0 and pct_r > 0) or (mix < 100 and pct_w > 0)
    all_random = (mix == 0 or pct_r == 100) and (mix == 100 or pct_w == 100)
    direction = "read" if mix == 100 else "write" if mix == 0 else "rw"
    opts: list[tuple[str, str]] = []
    if any_random:
        opts.append(("rw", "rand" + direction if direction != "rw" else "randrw"))
    else:
        opts.append(("rw", direction))
    if direction == "rw":
        opts.append(("rwmixread", str(mix)))
    if any_random and not all_random:
        if direction == "rw":
            opts.append(("percentage_random", f"{pct_r},{pct_w}"))
        else:
            opts.append(("percentage_random", str(pct_r if direction == "read" else pct_w)))

    sizes = sorted({w.line.size for w in ws})
    if len(sizes) == 1:
        opts.append(("bs", fio_size(sizes[0])))
    else:
        reads: dict[int, float] = {}
        writes: dict[int, float] = {}
        for w in ws:
            reads[w.line.size] = reads.get(w.line.size, 0.0) + w.p * w.line.reads / 100
            writes[w.line.size] = writes.get(w.line.size, 0.0) + w.p * (1 - w.line.reads / 100)
        r_list, w_list = largest_remainder(reads), largest_remainder(writes)
        if direction == "read":
            opts.append(("bssplit", _bssplit(r_list)))
        elif direction == "write":
            opts.append(("bssplit", f",{_bssplit(w_list)}"))
        else:
            opts.append(("bssplit", f"{_bssplit(r_list)},{_bssplit(w_list)}"))
        smallest = sizes[0]
        if any(s % smallest for s in sizes):
            opts.append(("bs_unaligned", "1"))

    if any_random:
        aligns = {_align_bytes(w.line, align_zero) for w in ws}
        if len(spec.lines) == 1 and spec.lines[0].align == spec.lines[0].size:
            pass  # fio's default blockalign is the block size, as Iometer's "request size boundaries"
        else:
            opts.append(("blockalign", fio_size(min(aligns))))

    delay = sum(w.p * w.line.delay for w in ws)
    if delay > 0:
        burst = max(1, round(sum(w.p * w.line.burst for w in ws)))
        opts += [
            ("thinktime", str(round(delay * 1000))),
            ("thinktime_blocks", str(burst)),
            ("thinktime_blocks_type", "issue"),
        ]
    return opts

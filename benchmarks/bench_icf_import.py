"""Median import time of every .icf file in the test corpus (tests/fixtures/icf).

Usage: python benchmarks/bench_icf_import.py [RUNS] [FOLDER]
RUNS defaults to 50; FOLDER defaults to tests/fixtures/icf.
Each run is load(path): reading the bytes, decoding and parsing. Target: under 50 ms per file.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from icf_import import load  # noqa: E402 - the repository root must be on sys.path first

TARGET_MS = 50.0


def corpus_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "icf"


def median_ms(path: Path, runs: int) -> float:
    load(path)  # warm-up: imports, file cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        load(path)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(argv: list[str]) -> int:
    runs = int(argv[1]) if len(argv) > 1 else 50
    folder = Path(argv[2]) if len(argv) > 2 else corpus_dir()
    files = sorted(folder.rglob("*.icf"))
    width = max(len(str(p.relative_to(folder))) for p in files)
    print(f"median of {runs} runs of icf_import.load(), Python {sys.version.split()[0]}")
    slow = 0
    for path in files:
        ms = median_ms(path, runs)
        slow += ms >= TARGET_MS
        lines = len(path.read_bytes().splitlines())
        print(f"{str(path.relative_to(folder)):<{width}}  {lines:5d} lines  {ms:8.3f} ms")
    print(f"{len(files)} files, {slow} at or over the {TARGET_MS:.0f} ms target")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Coverage with a floor that may only rise, and a pinned list of modules held at 100 % (qutebrowser's
PERFECT_FILES idea), read from .ci/coverage-floor.txt.

Measured on the fast tests (tests/unit and tests/windows: about 4 minutes, out of CI's 90) with coverage.py
([tool.coverage] in pyproject.toml: line coverage of app/ and icf_import/, this process only; fio and the
children a test starts are not measured). CI's `coverage` stage (.ci/run) runs it.

    python .ci/coverage_floor.py             run the fast tests under coverage, then check
    python .ci/coverage_floor.py --check     check the .coverage data already there (after `coverage run`)
    python .ci/coverage_floor.py --update    raise the floor to today's total (it never lowers it)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR_FILE = ROOT / ".ci" / "coverage-floor.txt"
TESTS = ("tests/unit", "tests/windows")
HEADER = """\
# Coverage of app/ and icf_import/ by the fast tests (tests/unit, tests/windows); checked by .ci/coverage_floor.py.
# 'floor N': the total line coverage in percent may not fall below N; N may only rise
# (python .ci/coverage_floor.py --update after adding tests).
# 'perfect PATH': a module held at 100 % (the safety guards, fio's protocol decoder, the store's codec).
# A line that cannot run under test says so with '# pragma: no cover - <why>'.
"""


def read_floor(path: Path = FLOOR_FILE) -> tuple[float, list[str]]:
    """(the floor in percent, the modules pinned at 100 %)."""
    floor, perfect = 0.0, []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, value = line.partition(" ")
        value = value.strip()
        if key == "floor":
            try:
                floor = float(value)
            except ValueError:
                sys.exit(f"coverage_floor: {path}:{n}: 'floor' needs a percentage, got {value!r}")
        elif key == "perfect" and value:
            perfect.append(value)
        else:
            sys.exit(
                f"coverage_floor: {path}:{n}: expected 'floor <percent>' or 'perfect <path>', got {line!r}"
            )
    return floor, perfect


def write_floor(floor: float, perfect: list[str], path: Path = FLOOR_FILE) -> None:
    rows = "".join(f"perfect {p}\n" for p in perfect)
    path.write_text(f"{HEADER}floor {floor:.1f}\n{rows}", encoding="utf-8")


def judge(
    total: float, files: dict[str, float], floor: float, perfect: list[str]
) -> tuple[list[str], list[str]]:
    """(failures, notes): the total under the floor, a pinned module under 100 % or not measured at all."""
    failures, notes = [], []
    if total + 1e-9 < floor:
        failures.append(
            f"total coverage {total:.2f} % is below the floor {floor:.1f} % (add tests, never lower it)"
        )
    elif total - floor >= 0.1:
        notes.append(f"total coverage {total:.2f} % is above the floor {floor:.1f} % (raise it: --update)")
    for p in perfect:
        if p not in files:
            failures.append(f"{p}: pinned at 100 % but not measured (moved? update {FLOOR_FILE.name})")
        elif files[p] < 100.0:
            failures.append(f"{p}: pinned at 100 %, now {files[p]:.2f} % (cover the new lines with a test)")
    return failures, notes


def measured(data_file: Path) -> tuple[float, dict[str, float], dict[str, list[int]]]:
    """(total percent, percent per file, missing lines per file) from coverage.py's JSON report."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        cmd = [sys.executable, "-m", "coverage", "json", "-q", f"--data-file={data_file}", "-o", str(out)]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"coverage_floor: `coverage json` failed:\n{done.stdout}{done.stderr}")
        report = json.loads(out.read_text(encoding="utf-8"))
    files = {Path(f).as_posix(): d["summary"]["percent_covered"] for f, d in report["files"].items()}
    missing = {Path(f).as_posix(): d["missing_lines"] for f, d in report["files"].items()}
    return report["totals"]["percent_covered"], files, missing


def run_tests(data_file: Path, extra: list[str]) -> int:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "COVERAGE_FILE": str(data_file)}
    cmd = [sys.executable, "-m", "coverage", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    cmd += [*TESTS, *extra]
    return subprocess.run(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL).returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="check the coverage data already measured")
    ap.add_argument("--update", action="store_true", help="raise the floor to today's total")
    ap.add_argument("--data-file", type=Path, default=ROOT / ".coverage")
    args, extra = ap.parse_known_args(argv)
    if not (args.check or args.update):
        rc = run_tests(args.data_file, extra)
        if rc != 0:
            print(
                f"coverage_floor: the tests failed (pytest exit {rc}); coverage not judged", file=sys.stderr
            )
            return rc
    floor, perfect = read_floor()
    total, files, missing = measured(args.data_file)
    if args.update:
        new = max(floor, math.floor(total * 10) / 10)
        write_floor(new, perfect)
        print(f"coverage_floor: floor {floor:.1f} % -> {new:.1f} % (measured {total:.2f} %)")
        return 0
    failures, notes = judge(total, files, floor, perfect)
    for p in perfect:
        if missing.get(p):
            print(f"coverage_floor: {p} misses lines {missing[p]}")
    for line in notes + failures:
        print(f"coverage_floor: {line}")
    if failures:
        return 1
    print(
        f"coverage_floor: {total:.2f} % of app/ and icf_import/ (floor {floor:.1f} %), "
        f"{len(perfect)} modules at 100 %"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

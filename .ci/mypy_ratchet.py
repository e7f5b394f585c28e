#!/usr/bin/env python3
"""mypy with a ratchet: no file may have more type errors than .ci/mypy-baseline.txt allows.

mypy's settings are in pyproject.toml ([tool.mypy]: --strict on app/model, app/engine, app/store,
app/process_owner.py and icf_import; the defaults elsewhere). A file missing from the baseline must
have no error at all, so a strict file that is clean now stays clean.

    python .ci/mypy_ratchet.py            check (run by `bash bootstrap.sh test`)
    python .ci/mypy_ratchet.py --update   write today's counts into the baseline (after fixing errors,
                                          or after a merge moved code between files; say why in the commit)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+: error: ")
HEADER = """\
# Type errors allowed per file; each count may only fall. Checked by .ci/mypy_ratchet.py.
# Refresh after fixing errors (or after a merge moved code): python .ci/mypy_ratchet.py --update
"""


def run_mypy() -> tuple[Counter[str], list[str]]:
    """Errors per file, and mypy's error lines."""
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines() if _file_of(ln)]
    if out.returncode not in (0, 1) or (out.returncode == 1 and not lines):
        sys.exit(f"mypy_ratchet: mypy failed to run (exit {out.returncode}):\n{out.stdout}{out.stderr}")
    return Counter(_file_of(ln) for ln in lines), lines


def _file_of(line: str) -> str:
    """The file an error line is about ('' for other lines)."""
    m = ERROR.match(line)
    return m["path"] if m else ""


def read_baseline(path: Path = BASELINE) -> Counter[str]:
    counts: Counter[str] = Counter()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        count, _, file = line.partition(" ")
        if not count.isdigit() or not file.strip():
            sys.exit(f"mypy_ratchet: {path}:{n}: expected '<count> <file>', got {line!r}")
        counts[file.strip()] = int(count)
    return counts


def write_baseline(counts: Counter[str], path: Path = BASELINE) -> None:
    rows = "".join(f"{n} {f}\n" for f, n in sorted(counts.items()) if n)
    path.write_text(f"{HEADER}# total {sum(counts.values())}\n{rows}", encoding="utf-8")


def compare(now: Counter[str], allowed: Counter[str]) -> tuple[list[str], list[str]]:
    """(files over their allowance, files now under it), each as 'file: allowed -> now'."""
    over = [f"{f}: {allowed[f]} -> {n}" for f, n in sorted(now.items()) if n > allowed[f]]
    under = [f"{f}: {n} -> {now[f]}" for f, n in sorted(allowed.items()) if now[f] < n]
    return over, under


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="write today's counts into the baseline")
    args = ap.parse_args(argv)
    now, lines = run_mypy()
    allowed = read_baseline() if BASELINE.exists() else Counter()
    over, under = compare(now, allowed)
    if args.update:
        write_baseline(now)
        for row in over:
            print(f"mypy_ratchet: raised {row}")
        print(
            f"mypy_ratchet: baseline written, {sum(now.values())} errors in {len(now)} files "
            f"(was {sum(allowed.values())})"
        )
        return 0
    if under:
        print(
            "mypy_ratchet: fewer errors than the baseline allows (lock it in with "
            "`python .ci/mypy_ratchet.py --update`):\n  " + "\n  ".join(under)
        )
    if over:
        bad = {row.split(":", 1)[0] for row in over}
        print("\n".join(ln for ln in lines if _file_of(ln) in bad))
        print(
            "mypy_ratchet: more type errors than allowed (fix them; the baseline only falls):\n  "
            + "\n  ".join(over),
            file=sys.stderr,
        )
        return 1
    print(f"mypy_ratchet: ok, {sum(now.values())} errors (baseline {sum(allowed.values())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

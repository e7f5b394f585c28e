#!/usr/bin/env python3
"""McCabe complexity with a ratchet over the whole tree: no function above 15, except those listed in
.ci/complexity-baseline.txt, each held at its figure, which may only fall.

ruff measures (C901); a function missing from the baseline must be at 15 or below, so what is simple
now stays simple, and a listed function that is split up must leave the list.

    python .ci/complexity_ratchet.py            check (run by `bash bootstrap.sh test`)
    python .ci/complexity_ratchet.py --update   write today's figures into the baseline (after splitting a
                                                function, or after a move; say why in the commit)
    python .ci/complexity_ratchet.py --root DIR check the Python files under DIR instead (tests of the guard)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "complexity-baseline.txt"
LIMIT = 15
TREES = ("app", "icf_import")
HEADER = f"""\
# Functions allowed above McCabe complexity {LIMIT}, each at most its figure; figures may only fall.
# Checked by .ci/complexity_ratchet.py; refresh after splitting a function: python .ci/complexity_ratchet.py --update
"""


def measure(root: Path, trees: tuple[str, ...]) -> dict[str, int]:
    """'path::function' -> complexity, for every function above the limit (paths relative to ``root``)."""
    ruff = Path(sys.executable).with_name("ruff")
    cmd = [str(ruff) if ruff.exists() else "ruff", "check", "--select", "C901", "--output-format", "json"]
    cmd += ["--config", f"lint.mccabe.max-complexity={LIMIT}", "--no-cache", *trees]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"complexity_ratchet: ruff failed (exit {out.returncode}):\n{out.stdout}{out.stderr}")
    found: dict[str, int] = {}
    for d in json.loads(out.stdout or "[]"):
        text = d["message"]  # "`name` is too complex (17 > 15)"
        name = text.split("`")[1]
        figure = int(text.rsplit("(", 1)[1].split(">")[0])
        path = Path(d["filename"]).resolve().relative_to(root.resolve()).as_posix()
        found[f"{path}::{name}"] = max(figure, found.get(f"{path}::{name}", 0))
    return found


def read_baseline(path: Path) -> dict[str, int]:
    allowed: dict[str, int] = {}
    if not path.exists():
        return allowed
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        figure, _, where = line.partition(" ")
        if not figure.isdigit() or "::" not in where:
            sys.exit(f"complexity_ratchet: {path}:{n}: expected '<figure> <path>::<function>', got {line!r}")
        allowed[where.strip()] = int(figure)
    return allowed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--root", type=Path, help="check the .py files under this folder (a test's tree)")
    ap.add_argument("--baseline", type=Path, default=BASELINE)
    args = ap.parse_args()
    root, trees = (args.root, (".",)) if args.root else (ROOT, TREES)
    found = measure(root, trees)
    if args.update:
        rows = "".join(f"{n} {w}\n" for w, n in sorted(found.items()))
        args.baseline.write_text(HEADER + rows, encoding="utf-8")
        print(f"complexity_ratchet: {len(found)} functions above {LIMIT} written to {args.baseline}")
        return 0
    allowed = read_baseline(args.baseline)
    worse = [
        f"  {w}: complexity {n}, "
        + (f"above its baseline {allowed[w]}" if w in allowed else f"above {LIMIT} and not in the baseline")
        for w, n in sorted(found.items())
        if n > allowed.get(w, LIMIT)
    ]
    better = [
        f"  {w}: {allowed[w]} -> {found.get(w, f'<= {LIMIT}')}"
        for w in sorted(allowed)
        if found.get(w, 0) < allowed[w]
    ]
    if better:
        print(
            "complexity_ratchet: simpler than the baseline (lower it: python .ci/complexity_ratchet.py --update):"
        )
        print("\n".join(better))
    if worse:
        print(
            f"complexity_ratchet: functions too complex (split them, at most {LIMIT}):\n" + "\n".join(worse)
        )
        return 1
    print(f"complexity_ratchet: {len(found)} functions above {LIMIT}, none above its baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())

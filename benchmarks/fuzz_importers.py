"""Fuzz the importers end to end: every mutated .icf or plan file gives a plan or a clean, located error.

Seeded and repeatable. Each case goes as far as the input allows: read -> plan -> validation ->
test steps -> the runner's own preparation (targets placed on what fio would open, arming, the job
policy) -> fio job text, for a local Linux manager and a remote Windows one. Targets are mapped to
ordinary files or to hostile paths (links to devices, /proc, fio's ${VAR} and comment syntax, blanks).
A job the runner accepts is checked again: its path absolute, links followed, read by fio as written. Allowed outcomes are results and the project's own
user-facing errors; anything else (a traceback) is a failure, printed with the seed and case number.
Usage: python benchmarks/fuzz_importers.py [--cases 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import icf_import  # noqa: E402
from app.engine.jobs.sequence import SequenceTooLong, expand  # noqa: E402
from app.engine.jobs.targets import fio_filename, fio_path_problem  # noqa: E402
from app.engine.run.runner import ManagerEndpoint, Runner, RunOptions, RunRefused  # noqa: E402
from app.model import planfile  # noqa: E402
from app.model.examples import EXAMPLES  # noqa: E402
from app.model.from_icf import plan_from_icf  # noqa: E402
from app.model.validation import validate  # noqa: E402
from tests.helpers import shared_dir  # noqa: E402
from tests.unit.test_icf_fuzz import PIECES, mutate  # noqa: E402

CORPUS = sorted((shared_dir() / "icf").rglob("*.icf"))
OPS = ("set", "insert", "delete_line", "duplicate_line", "swap_lines", "truncate")


def random_ops(rng: random.Random) -> list[tuple[str, int, int, bytes]]:
    return [
        (
            rng.choice(OPS),
            rng.randrange(1 << 20),
            rng.randrange(1 << 20),
            rng.choice(PIECES) if rng.random() < 0.7 else rng.randbytes(rng.randint(1, 6)),
        )
        for _ in range(rng.randint(1, 6))
    ]


SCRATCH = Path(tempfile.mkdtemp(prefix="fiometer-fuzz-"))
atexit.register(shutil.rmtree, SCRATCH, True)
(SCRATCH / "to-null").symlink_to("/dev/null")
(SCRATCH / "existing.tst").write_bytes(b"x" * 4096)
HOSTILE = [
    "${HOME}/x.tst",
    "/tmp/a;b.tst",
    "/tmp/a#b.tst",
    " /tmp/x.tst",
    "/tmp/x.tst ",
    "/tmp/x\t",
    "//dev/null",
    "/./dev/null",
    "/tmp/../dev/null",
    "/proc/self/root/dev/null",
    "/dev/fd/0",
    "rel/x.tst",
    "x:y.tst",
    "/dev/fiometer-none",
    str(SCRATCH / "to-null"),
    str(SCRATCH / "existing.tst"),
    str(SCRATCH),
    str(SCRATCH / "missing" / "x.tst"),
    "$ncpus",
    "C:\\x.tst",
    "\\\\.\\PhysicalDrive0",
    "/" + "x" * 5000,
]


def _never(*_a):
    raise AssertionError("the fuzzer never starts fio")


def _check_accepted(runner: Runner) -> None:
    """Invariants of every job the runner accepted."""
    for files in runner.jobfiles:
        for jf in files.values():
            lines = jf.text.splitlines()
            for job in jf.jobs:
                if job.network:  # a TCP connection of a network worker, not a file or device
                    continue
                assert fio_path_problem(job.path) is None, job.path
                assert f"filename={fio_filename(job.path)}" in lines, job.path
                if runner.endpoints[jf.manager].host == "local":
                    assert os.path.isabs(job.path) and os.path.realpath(job.path) == job.path, job.path


def run_plan(plan, rng: random.Random | None = None) -> str:
    """From a plan through the runner's preparation to job text; returns the outcome label."""
    if any(p.severity == "error" for p in validate(plan)):
        return "invalid plan (field errors)"
    try:
        steps = expand(plan)
    except SequenceTooLong:
        return "too many steps"
    rng = rng or random.Random(0)
    names = sorted({t.name for m in plan.managers for w in m.workers for t in w.targets})
    mapping = {
        n: rng.choice(HOSTILE) if rng.random() < 0.5 else str(SCRATCH / f"fuzz-{i}.tst")
        for i, n in enumerate(names)
    }
    labels = []
    for os_name, host in (("Linux", "local"), ("Windows", "10.0.0.9:8765")):
        endpoints = {m.name: ManagerEndpoint(m.name, os_name, _never, host) for m in plan.managers}
        try:
            runner = Runner(plan, endpoints, None, RunOptions(mapping=mapping))
            runner.prepare()
        except RunRefused:  # a clean, explained refusal
            labels.append("refused")
            continue
        _check_accepted(runner)
        labels.append("job files")
    return " / ".join(labels) if steps else "no steps"


def icf_case(rng: random.Random, originals: list[bytes]) -> str:
    data = mutate(rng.choice(originals), random_ops(rng))
    doc = icf_import.parse(data, "fuzz.icf")
    lines = max(1, len(data.splitlines()))
    for d in doc.diagnostics:
        if not 0 <= d.line <= lines:
            raise AssertionError(f"diagnostic outside the file: {d}")
    if doc.errors:
        return "icf errors (located)"
    return run_plan(plan_from_icf(doc), rng)


def _mutate_json(rng: random.Random, value):
    if isinstance(value, dict) and value:
        k = rng.choice(list(value))
        value[k] = (
            _mutate_json(rng, value[k])
            if rng.random() < 0.8
            else rng.choice([None, -1, 0, 1 << 40, "x", [], {}, True, 3.5, "\n"])
        )
    elif isinstance(value, list) and value:
        i = rng.randrange(len(value))
        if rng.random() < 0.2:
            del value[i]
        elif rng.random() < 0.2:
            value.append(value[i])
        else:
            value[i] = _mutate_json(rng, value[i])
    else:
        return rng.choice(
            [None, -5, 0, 7, 65536, 10**12, "", "abc", "C:", "/dev/sdz", "\u00e9\n", 1.5, False]
        )
    return value


def plan_case(rng: random.Random, originals: list[str]) -> str:
    text = rng.choice(originals)
    if rng.random() < 0.3:  # damage the text itself
        b = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        text = b.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            return "json syntax error"
    else:
        data = json.loads(text)
        for _ in range(rng.randint(1, 4)):
            data = _mutate_json(rng, data)
    try:
        plan, _ = planfile.from_dict(data, "fuzz.json")
    except planfile.PlanFileError:
        return "plan file errors (located)"
    return run_plan(plan, rng)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000, help="cases per importer")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    icf_originals = [p.read_bytes() for p in CORPUS]
    plan_originals = [planfile.dumps(e.build()) for e in EXAMPLES]
    failures = 0
    for name, case, originals in (("icf", icf_case, icf_originals), ("plan", plan_case, plan_originals)):
        outcomes: Counter[str] = Counter()
        t0 = time.perf_counter()
        for i in range(args.cases):
            rng = random.Random(f"{args.seed}-{name}-{i}")
            try:
                outcomes[case(rng, originals)] += 1
            except Exception as e:  # noqa: BLE001 - this is what the fuzzer looks for
                failures += 1
                outcomes["CRASH"] += 1
                if failures <= 5:
                    print(f"CRASH {name} case {i} (seed {args.seed}): {type(e).__name__}: {e}")
        secs = time.perf_counter() - t0
        print(
            f"{name}: {args.cases} cases in {secs:.1f} s ({args.cases / secs:,.0f}/s): "
            + ", ".join(f"{k} {v}" for k, v in outcomes.most_common())
        )
    print("no crashes" if not failures else f"{failures} crashes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

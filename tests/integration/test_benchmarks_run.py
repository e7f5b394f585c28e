"""Every script in benchmarks/ runs to its end and prints its figures (issue 27.8): nothing else runs them, and
a benchmark that no longer runs measures nothing (four of them crashed unnoticed after a rename).

Each script runs once, as a user runs it (a fresh process, from the repository root), with the smallest
arguments that still go through its whole path: a few seconds of fio, two hosts, one repeat, a run of
seconds written by make_long_run.py. The case checks the exit status, that no traceback was printed, and that
the lines with its figures were printed, their numbers parsed. Targets are not judged: the machine may be
loaded, and figures of seconds mean nothing; this proves only that the benchmark still measures.

A benchmark must write only into the system's temporary folder (TMPDIR is the test's own here): the
checkout is listed before and after each case, ignored files included (a stray *.db is ignored by git).
A new script in benchmarks/ needs a case in CASES, or a reason in NOT_A_BENCHMARK.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.platform_marks import posix_only

pytestmark = [
    pytest.mark.fio,
    pytest.mark.slow,
    posix_only("the benchmarks read /proc, run fio servers on 127.0.0.x and kill process groups"),
]

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
NUMBER = r"([-+]?\d[\d,]*(?:\.\d+)?)"
TIMEOUT_S = 240  # per case; each takes seconds (a hang fails, and what runs in its session is killed)

NOT_A_BENCHMARK = {
    "offscreen.py": "a helper the GUI benchmarks import (Qt's offscreen screen size); it runs inside them",
}


def padded(pattern: str) -> str:
    """A figure may be printed padded to a width (``{x:4.1f}``: " 6.3" on a fast machine, "12.5" on a slow
    one): one space before a number in a pattern matches any run of spaces."""
    return pattern.replace(" " + NUMBER, r"\s+" + NUMBER)


def test_a_figure_matches_however_it_is_padded():
    assert re.search(padded(rf"floor \(fixed work\) {NUMBER} ms"), "floor (fixed work)  6.3 ms")
    assert re.search(padded(rf"floor \(fixed work\) {NUMBER} ms"), "floor (fixed work) 16.3 ms")
    assert not re.search(padded(rf"floor \(fixed work\) {NUMBER} ms"), "floor (fixed work)6.3 ms")


@dataclass(frozen=True)
class Case:
    """How to run one script small: ``args`` (``{tmp}`` and the keys of ``prepare``'s answer filled in),
    and the figures it must print: each pattern must match a line, its groups parsed as numbers."""

    args: tuple[str, ...]
    figures: tuple[str, ...]
    prepare: Callable[[Path], dict[str, str | list[str]]] | None = None
    exit_codes: frozenset[int] = frozenset({0})
    env: dict[str, str] = field(default_factory=dict)


_made: list[Path] = []  # the folder make_runs wrote its databases into, once for the session


def make_runs(tmp: Path) -> dict[str, str | list[str]]:
    """Two results databases written by make_long_run.py: small.db holding run 1 (6 s x 2 workers), big.db
    holding the same run 1 and a longer run 2 (30 s x 4 workers over two managers). Written once; each case
    gets its own copies (bench_export_memory.py adds a run to its database)."""
    if not _made:
        made = tmp / "made"
        made.mkdir()
        for db, minutes, workers, managers in (
            ("small.db", "0.1", "2", "1"),
            ("big.db", "0.1", "2", "1"),
            ("big.db", "0.5", "4", "2"),
        ):
            cmd = [sys.executable, str(BENCH / "make_long_run.py"), "--db", str(made / db)]
            cmd += [
                "--minutes",
                minutes,
                "--workers",
                workers,
                "--managers",
                managers,
                "--step-minutes",
                "0.25",
            ]
            done = subprocess.run(
                cmd, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
            )
            assert done.returncode == 0, done.stderr
        _made.append(made)
    for db in ("small.db", "big.db"):
        shutil.copy2(_made[0] / db, tmp / db)
    return {"small": str(tmp / "small.db"), "big": str(tmp / "big.db")}


def fio_sources(tmp: Path) -> dict[str, str | list[str]]:
    """For build_fio_versions.sh: a cache already holding version "cached" (the installed fio, copied), and a
    source folder with fio-built.tar.gz, a tree whose configure and make "build" fio by copying the installed
    binary: the script's whole path (unpack, configure, make, install into the cache, --version) in a second,
    where compiling fio's real sources takes minutes. Without make (bootstrap.sh does not install a
    compiler) only the cached version is asked for."""
    fio = shutil.which("fio")
    assert fio, "fio is not installed (bootstrap.sh installs it)"
    cache, src = tmp / "fio-cache", tmp / "fio-src"
    (cache / "cached").mkdir(parents=True)
    shutil.copy2(fio, cache / "cached" / "fio")
    src.mkdir()
    versions = ["cached"]
    if shutil.which("make"):
        tree = tmp / "fio-built"
        tree.mkdir()
        (tree / "configure").write_text('#!/bin/sh\n[ "$1" = --disable-native ] || exit 1\n')
        (tree / "configure").chmod(0o755)
        (tree / "Makefile").write_text(f"fio:\n\tcp {fio} fio\n")
        with tarfile.open(src / "fio-built.tar.gz", "w:gz") as tar:
            tar.add(tree, arcname="fio-fio-built")
        shutil.rmtree(tree)
        versions.append("built")
    paths = ":".join(f"{cache}/{v}/fio" for v in versions)  # what the script's last line must be
    return {"src": str(src), "cache": str(cache), "versions": versions, "paths": re.escape(paths)}


CASES: dict[str, Case] = {
    "bench_cli_reads.py": Case(
        ("--small", "{small}", "--big", "{big}", "--run", "1", "--repeat", "1"),
        (
            rf"^runs\s+small database\s+{NUMBER} ms CPU, with a long run beside it\s+{NUMBER} ms CPU: ratio {NUMBER}",
            rf"^show\s.*ratio {NUMBER}",
            rf"^report\s.*ratio {NUMBER}",
        ),
        prepare=make_runs,
    ),
    "bench_engines.py": Case(
        ("--seconds", "1", "--repeats", "1"),
        (rf"^libaio\s+median IOPS {NUMBER} \(ratio to libaio {NUMBER}\); median CPU per I/O {NUMBER} us",),
    ),
    "bench_long_reports.py": Case(
        ("--minutes", "0.5", "--workers", "2", "--repeat", "2"),
        (
            rf"^compare\s+{NUMBER} s wall,\s+{NUMBER} s CPU, peak\s+{NUMBER} MB",
            rf"^report PDF\+XLSX\+HTML\s+{NUMBER} s wall,\s+{NUMBER} s CPU, peak\s+{NUMBER} MB",
        ),
    ),
    "bench_export_memory.py": Case(
        ("--db", "{small}", "--short", "1", "--workers", "2"),
        (
            rf"^1 h x 2 workers: .*streamed: peak {NUMBER} MB, {NUMBER} s CPU .*; whole file in memory.*peak "
            rf"{NUMBER} MB.*same bytes: True",
            rf"^8 h x 2 workers: .*streamed: peak {NUMBER} MB",
            rf"^peak memory 8 h / 1 h: {NUMBER}",
        ),
        prepare=make_runs,
    ),
    "bench_fioproto.py": Case(
        ("--jobs", "4", "--rounds", "1", "--repeats", "1", "--runtime", "1"),
        (
            rf"fio-3\.42-job3 .* MB on the wire:\s+{NUMBER} ms\s+\(with payload CRC check:\s+{NUMBER} ms\)",
            rf"worst case {NUMBER} ms per report",
            rf"pair 1 .*local\s+{NUMBER} M IOPS .*remote\s+{NUMBER} M IOPS.*ratio {NUMBER}",
            rf"ratio of means {NUMBER}",
        ),
    ),
    "bench_gui.py": Case(
        ("--grid", "2x2", "--updates", "3", "--seconds", "1"),
        (
            rf"Each worker \(all managers\)\s+WHOLE_TEST\s+median\s+{NUMBER} ms wall,\s+{NUMBER} ms CPU",
            rf"All Managers\s+LAST_UPDATE\s+median\s+{NUMBER} ms wall",
            rf"a\) real run.*\n\s+lateness median\s+{NUMBER} ms, p99\s+{NUMBER} ms",
            rf"b\) synthetic.*\n\s+lateness median\s+{NUMBER} ms, p99\s+{NUMBER} ms",
        ),
    ),
    "bench_gui_interval.py": Case(
        ("--managers", "2", "--workers", "2", "--warmup", "3", "--intervals", "3"),
        (
            rf"Each worker \(all managers\)\s+GUI thread per interval: median\s+{NUMBER} ms CPU \(receive\s+"
            rf"{NUMBER}, feed\s+{NUMBER}, charts\s+{NUMBER}, table\s+{NUMBER}, paint\s+{NUMBER}",
            rf"All Managers\s+GUI thread per interval: median\s+{NUMBER} ms CPU",
            rf"floor \(fixed work, same run\)\s+{NUMBER} ms; interval / floor\s+{NUMBER}",
        ),
    ),
    # exit 1 is its verdict "a file took 50 ms or more" (one load on a busy machine can); its summary line is
    # printed either way, a crash never prints it
    "bench_icf_import.py": Case(
        ("3",),
        (
            rf"\.icf\s+{NUMBER} lines\s+{NUMBER} ms$",
            rf"^{NUMBER} files, {NUMBER} at or over the 50 ms target",
        ),
        exit_codes=frozenset({0, 1}),
    ),
    "bench_live_feed.py": Case(
        ("--jobs", "16", "--workers", "4", "--intervals", "3"),
        (rf"^{NUMBER} charted series: {NUMBER} ms CPU per interval = {NUMBER} ms per series per interval",),
    ),
    "bench_many_hosts.py": Case(
        ("--hosts", "2", "--seconds", "2", "--floor", "--run-apart", "2")
        + (("--cpus-apart",) if len(os.sched_getaffinity(0)) > 1 else ()),
        (
            rf"^\s+2 hosts .*the run in a process of its own.*event loop lateness median {NUMBER} ms, p99 {NUMBER} ms"
            rf".*longest stall {NUMBER} ms \(longest gaps: {NUMBER} ms at \+{NUMBER} s \((Start|before the first "
            r"report|live|the end)\).*every report stored for "
            rf"{NUMBER}/2 managers.*final IOPS = server's own report for {NUMBER}/2",
            rf"floor: fio's own client on the same 2 servers, the window idle: event loop p99 {NUMBER} ms",
            rf"^largest fan-out meeting every goal: {NUMBER} hosts",
        ),
    ),
    "bench_probe_managers.py": Case(
        # a probe's timeout that a fio server on a loaded machine meets (1 s was missed once at load 5)
        ("--hosts", "3", "--rounds", "1", "--silent", "1", "--timeout", "3"),
        (
            rf"^  one after another: median {NUMBER} s",
            rf"^  at once \(build_endpoints\): median {NUMBER} s",
            rf"^  ratio: {NUMBER}x",
        ),
    ),
    "bench_open_run.py": Case(
        ("--db", "{small}", "--run", "1"),
        (
            rf"^run 1: open {NUMBER} ms CPU, peak \+{NUMBER} MB; scope Each worker {NUMBER} ms, back {NUMBER} ms; "
            rf"step one {NUMBER} ms, back to all {NUMBER} ms; latency distribution all steps {NUMBER} ms, "
            rf"one step {NUMBER} ms",
        ),
        prepare=make_runs,
    ),
    "bench_remote_checks.py": Case(
        ("--files", "1", "--repeat", "1"),
        (
            rf"^bare null fio job on the server:\s+{NUMBER} ms",
            rf"^probe of 1 test files:\s+{NUMBER} ms\s+\({NUMBER}x a bare job\)",
            rf"^ssh:// rules, place 1 files \(no ssh\): {NUMBER} ms",
            rf"^ssh:// rules, hold and adopt \(no ssh\): {NUMBER} ms",
        ),
    ),
    "bench_run_overhead.py": Case(
        ("--seconds", "1", "--repeats", "1"),
        (
            rf"^null engine 4k: median IOPS ratio {NUMBER} .*median CPU per I/O ratio {NUMBER}.*own CPU {NUMBER} %",
            rf"^4k randread 64 MiB file, libaio QD32: median IOPS ratio {NUMBER} .*median CPU per I/O ratio {NUMBER}.*own CPU {NUMBER} %",
        ),
    ),
    "bench_store.py": Case(
        ("--minutes", "1", "--jobs", "2", "--intervals", "3"),
        (
            rf"^\s+median {NUMBER} ms, p95 {NUMBER} ms, max {NUMBER} ms; first interval .* {NUMBER} ms; mean "
            rf"CPU {NUMBER} ms",
            rf"^\(b\) 1 min at 1 Hz, 2 jobs .*grew {NUMBER} MB = {NUMBER} MB per job-hour",
        ),
    ),
    "bench_store_size.py": Case(
        # --migrate copies the file first (the checkout listing proves the fixture is left as it is)
        ("--minutes", "1", "--workers", "2", "--migrate", "tests/fixtures/store/v2-two-runs.db"),
        (
            rf"^new recording, 1 min x 2 workers: {NUMBER} MB = {NUMBER} MB per worker-hour",
            rf"^migrated v2-two-runs\.db .*: {NUMBER} MB .* -> {NUMBER} MB .*ratio {NUMBER}, {NUMBER} s CPU",
        ),
    ),
    "bench_target_checks.py": Case(
        ("--targets", "1", "--repeat", "2"),
        (rf"1 test file\(s\) of Fiometer's:\s+{NUMBER} /\s+{NUMBER} ms",),
    ),
    "bench_telemetry.py": Case(
        ("--jobs", "16", "--rounds", "2", "--runtime", "1", "--repeats", "1"),
        (
            rf"parse with json\.loads\s+cpu\s+{NUMBER} ms",
            rf"^null engine.*\n(?:.*\n)*?\s+ratio of medians LocalFio/plain = {NUMBER}",
            rf"^libaio .*\n(?:.*\n)*?\s+ratio of medians LocalFio/plain = {NUMBER}",
            rf"Fiometer's own CPU while fio ran: {NUMBER} % of one core",
        ),
    ),
    "build_fio_versions.sh": Case(
        ("{src}", "{versions}"),
        (r"^{paths}$", r"^fio-3\.\d+"),  # the FIOMETER_EXTRA_FIO value; fio --version of each
        prepare=fio_sources,
        env={"FIOMETER_FIO_CACHE": "{cache}"},
    ),
    "fuzz_importers.py": Case(
        ("--cases", "40"),
        (rf"^icf: 40 cases in {NUMBER} s", rf"^plan: 40 cases in {NUMBER} s", r"^no crashes$"),
    ),
    "kill_under_load.py": Case(
        ("--jobs", "4", "--repeats", "1"),
        (rf"^run 1: {NUMBER} fio processes, all ended {NUMBER} s after the kill", rf"^median {NUMBER} s"),
    ),
    "make_long_run.py": Case(
        (
            "--db",
            "{tmp}/long.db",
            "--minutes",
            "0.2",
            "--workers",
            "2",
            "--step-minutes",
            "0.1",
            "--repeat",
            "2",
        ),
        (r"\A1\n2$", rf"^written in {NUMBER} s CPU"),  # the run's id, the repeated run's id; CPU time
    ),
    "soak_gui.py": Case(
        ("--minutes", "0.05"),
        (
            rf"^run complete after {NUMBER} min; RSS at 1 min {NUMBER} MiB, at the end {NUMBER} MiB",
            r"^integrity_check: ok$",
            rf"^stored run 1: status complete, step complete; samples per series: {NUMBER}\.\.{NUMBER}",
        ),
    ),
    "soak_gui_synthetic.py": Case(
        ("--minutes", "1", "--workers", "2", "--redraw-every", "10", "--screenshot", "{tmp}/results.png"),
        (
            r"^saved .*results\.png$",
            rf"1\.0 sim-min\s+RSS\s+{NUMBER} MiB\s+points kept\s+{NUMBER}",
            rf"^RSS at 1 sim-min {NUMBER} MiB, at the end {NUMBER} MiB",
        ),
    ),
}


def benchmark_files() -> set[str]:
    return {p.name for p in BENCH.iterdir() if p.suffix in (".py", ".sh")}


def checkout_listing() -> dict[str, tuple[int, int]]:
    """Every file of the checkout (ignored ones too), but git's own, the virtualenv and Python's byte caches,
    with its size and modification time."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (".git", ".venv", "__pycache__")]
        for name in files:
            path = Path(folder, name)
            with_stat = path.lstat()
            found[str(path.relative_to(ROOT))] = (with_stat.st_size, with_stat.st_mtime_ns)
    return found


def left_running(session: int) -> dict[int, str]:
    """pid -> command line of every living process (zombies aside) of the session ``session`` leads."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _ppid, _pgrp, sid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:4]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(sid) == session and state not in ("Z", "X"):
            found[int(entry.name)] = cmdline
    return found


def stop(processes: dict[int, str]) -> None:
    for pid in processes:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def fill(text: str, values: dict[str, str | list[str]]) -> list[str]:
    """``text`` with each ``{key}`` replaced by its value; a list value (only alone in an argument) gives
    as many arguments."""
    for key, value in values.items():
        if isinstance(value, list):
            if text == f"{{{key}}}":
                return value
        else:
            text = text.replace(f"{{{key}}}", value)
    return [text]


def test_every_benchmark_has_a_case():
    files = benchmark_files()
    assert not set(CASES) & set(NOT_A_BENCHMARK)
    assert set(CASES) | set(NOT_A_BENCHMARK) == files, (
        f"without a case: {sorted(files - set(CASES) - set(NOT_A_BENCHMARK))}; "
        f"cases of no file: {sorted((set(CASES) | set(NOT_A_BENCHMARK)) - files)}"
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_benchmark_runs_and_prints_its_figures(name, tmp_path):
    case = CASES[name]
    values: dict[str, str | list[str]] = {"tmp": str(tmp_path)}
    if case.prepare:
        values |= case.prepare(tmp_path)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "QT_QPA_PLATFORM": "offscreen", "PYTHONUNBUFFERED": "1"}
    env |= {k: fill(v, values)[0] for k, v in case.env.items()}
    script = BENCH / name
    runner = ["bash"] if name.endswith(".sh") else [sys.executable]
    args = [a for arg in case.args for a in fill(arg, values)]
    before = checkout_listing()
    t0, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        [*runner, str(script), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its fio servers and children can be stopped with it
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop(left_running(proc.pid))
        out, err = proc.communicate()
        pytest.fail(f"{name} {' '.join(args)} ran over {TIMEOUT_S} s\n{out}\n{err}")
    took, cpu1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime  # of the processes waited for
    deadline = time.monotonic() + 10  # what it started (fio servers...) ends with it
    while (stray := left_running(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    stop(stray)
    print(f"{name}: {took:.1f} s, {cpu:.1f} s CPU, load average {os.getloadavg()[0]:.1f}")
    shown = f"{name} {' '.join(args)} (exit {proc.returncode}, {took:.1f} s)\n--- stdout\n{out}\n--- stderr\n{err}"
    assert proc.returncode in case.exit_codes, shown
    assert "Traceback" not in err, shown
    for figure in case.figures:
        (pattern,) = fill(figure, values)
        pattern = padded(pattern)
        found = re.search(pattern, f"{out}\n{err}", re.MULTILINE)  # a few print to stderr
        assert found, f"no line matches {pattern!r}\n{shown}"
        for group in found.groups():
            if group is not None and re.fullmatch(NUMBER, group):
                assert math.isfinite(float(group.replace(",", ""))), f"{pattern!r}: {group}\n{shown}"
    assert not stray, f"{name} left processes running: {stray}"
    after = checkout_listing()
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert not changed, f"{name} wrote into the checkout: {changed}"


def test_runs_the_long_run_maker_writes_compare_and_report(tmp_path):
    """make_long_run.py stores the plan such a run would have run, so compare and report read its runs as
    they read real ones (its synthetic plan once made both stop with an internal error)."""
    db = make_runs(tmp_path)["big"]
    cli = [sys.executable, "-m", "app.cli", "--db", str(db)]
    compared = subprocess.run(
        [*cli, "compare", "1", "2"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert compared.returncode == 0, compared.stderr
    assert "(run 2) compared with" in compared.stdout and "(run 1)" in compared.stdout
    pdf, xlsx = tmp_path / "r.pdf", tmp_path / "r.xlsx"
    cmd = [*cli, "report", "1", "--compare", "2", "--pdf", str(pdf), "--xlsx", str(xlsx)]
    reported = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert reported.returncode == 0, reported.stderr
    assert pdf.stat().st_size > 0 and xlsx.stat().st_size > 0


def test_a_damaged_stored_plan_is_said_and_compare_and_report_still_work(tmp_path):
    """A run whose stored plan_json is not a plan (damaged in a user's database, or an old synthetic run):
    compare and report go on and the report says what it cannot show, never an internal error."""
    import sqlite3

    db = make_runs(tmp_path)["big"]
    with sqlite3.connect(db) as conn:
        conn.execute("""UPDATE runs SET plan_json = '{"synthetic": true}' WHERE id = 1""")
    conn.close()
    cli = [sys.executable, "-m", "app.cli", "--db", str(db)]
    compared = subprocess.run(
        [*cli, "compare", "1", "2"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert compared.returncode == 0 and "internal error" not in compared.stderr, compared.stderr
    html = tmp_path / "r.html"
    cmd = [*cli, "report", "1", "--compare", "2", "--html", str(html)]
    reported = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert reported.returncode == 0, reported.stderr
    assert "its stored plan cannot be read" in html.read_text(encoding="utf-8")


def test_the_long_reports_benchmark_runs_on_a_database_made_before(tmp_path):
    """An 18-hour run beside the others (make_long_run --from-run ID --repeat N) and the reports benchmark on
    that database (--db, --runs), as performance.md's 18-hour row runs them."""
    db = make_runs(tmp_path)["big"]
    made = subprocess.run(
        [sys.executable, str(BENCH / "make_long_run.py"), "--db", db, "--from-run", "1", "--repeat", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert made.returncode == 0 and made.stdout.split() == ["3"], made.stderr
    cmd = [sys.executable, str(BENCH / "bench_long_reports.py"), "--db", db, "--runs", "1", "3"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert "runs 1 and 3 of" in done.stdout and "report PDF+XLSX+HTML" in done.stdout

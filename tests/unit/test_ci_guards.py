"""The typing ratchet (.ci/mypy_ratchet.py): a file may not gain errors, and a strict file that is clean stays
clean. The complexity ratchet (.ci/complexity_ratchet.py, bootstrap.sh's test stage): no function in the tree above
complexity 15 but those listed, each at most its figure."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ratchet():
    spec = importlib.util.spec_from_file_location("mypy_ratchet", ROOT / ".ci" / "mypy_ratchet.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["mypy_ratchet"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_file_over_its_allowance_fails_and_one_under_it_is_reported():
    r = _ratchet()
    over, under = r.compare(Counter({"a.py": 3, "b.py": 1, "new.py": 1}), Counter({"a.py": 2, "b.py": 4}))
    assert over == ["a.py: 2 -> 3", "new.py: 0 -> 1"]
    assert under == ["b.py: 4 -> 1"]
    assert r.compare(Counter({"a.py": 2}), Counter({"a.py": 2})) == ([], [])


def test_the_baseline_round_trips_and_drops_clean_files(tmp_path):
    r = _ratchet()
    path = tmp_path / "baseline.txt"
    r.write_baseline(Counter({"app/x.py": 5, "app/clean.py": 0}), path)
    assert "app/clean.py" not in path.read_text()
    assert r.read_baseline(path) == Counter({"app/x.py": 5})


def test_an_error_line_names_its_file():
    r = _ratchet()
    assert r._file_of('app/model/metrics.py:83: error: "None" not callable  [misc]') == "app/model/metrics.py"
    assert r._file_of("app/x.py:1: note: See https://...") == ""
    assert r._file_of("Found 3 errors in 2 files") == ""


def test_the_committed_baseline_is_readable():
    r = _ratchet()
    assert sum(r.read_baseline().values()) > 0  # the rooms still to type are listed with their counts


RUFF = Path(sys.executable).parent / "ruff"
needs_ruff = pytest.mark.skipif(
    not RUFF.exists(), reason="ruff is the Linux side's linter (not installed for Windows Python)"
)


RATCHET = [sys.executable, str(ROOT / ".ci" / "complexity_ratchet.py")]


def _function(name: str, branches: int) -> str:
    """A function of complexity ``branches`` + 1."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(branches))
    return f"def {name}(x):\n{body}    return -1\n"


def _guard(tree: Path, baseline: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*RATCHET, "--root", str(tree), "--baseline", str(baseline)], cwd=ROOT, capture_output=True, text=True
    )


@needs_ruff
def test_the_complexity_ratchet_fails_on_a_new_function_over_15_and_names_it(tmp_path):
    tree, baseline = tmp_path / "tree", tmp_path / "baseline.txt"
    tree.mkdir()
    (tree / "ok.py").write_text(_function("at_the_limit", 14))
    passed = _guard(tree, baseline)
    assert passed.returncode == 0, passed.stdout + passed.stderr  # complexity 15 is allowed
    (tree / "bad.py").write_text(_function("too_tangled", 15))
    failed = _guard(tree, baseline)
    assert failed.returncode == 1
    assert "bad.py::too_tangled: complexity 16, above 15 and not in the baseline" in failed.stdout
    assert "at_the_limit" not in failed.stdout


@needs_ruff
def test_a_listed_function_is_held_at_its_figure_and_a_simpler_one_is_reported(tmp_path):
    tree, baseline = tmp_path / "tree", tmp_path / "baseline.txt"
    tree.mkdir()
    (tree / "old.py").write_text(_function("tangled", 19))  # complexity 20
    baseline.write_text("20 old.py::tangled\n")
    assert _guard(tree, baseline).returncode == 0
    (tree / "old.py").write_text(_function("tangled", 20))  # 21: above its figure
    worse = _guard(tree, baseline)
    assert worse.returncode == 1 and "old.py::tangled: complexity 21, above its baseline 20" in worse.stdout
    (tree / "old.py").write_text(_function("tangled", 10))  # split up: lower the figure
    better = _guard(tree, baseline)
    assert better.returncode == 0 and "old.py::tangled: 20 -> <= 15" in better.stdout


@needs_ruff
def test_no_function_in_the_tree_is_above_its_allowance():
    run = subprocess.run(RATCHET, cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "simpler than the baseline" not in run.stdout, run.stdout  # the baseline is kept as low as it is


def test_bootstrap_runs_the_ratchet():
    assert ".venv/bin/python .ci/complexity_ratchet.py" in (ROOT / "bootstrap.sh").read_text()


def _coverage_guard():
    spec = importlib.util.spec_from_file_location("coverage_floor", ROOT / ".ci" / "coverage_floor.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["coverage_floor"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_coverage_under_its_floor_or_a_pinned_module_under_100_fails():
    g = _coverage_guard()
    files = {"app/a.py": 100.0, "app/b.py": 99.5}
    assert g.judge(61.0, files, 60.0, ["app/a.py"]) == (
        [],
        ["total coverage 61.00 % is above the floor 60.0 % (raise it: --update)"],
    )
    assert g.judge(60.04, files, 60.0, ["app/a.py"]) == ([], [])
    failures, _ = g.judge(59.9, files, 60.0, ["app/a.py", "app/b.py", "app/gone.py"])
    assert failures == [
        "total coverage 59.90 % is below the floor 60.0 % (add tests, never lower it)",
        "app/b.py: pinned at 100 %, now 99.50 % (cover the new lines with a test)",
        "app/gone.py: pinned at 100 % but not measured (moved? update coverage-floor.txt)",
    ]


def test_the_coverage_floor_round_trips_and_a_bad_line_is_named(tmp_path):
    g = _coverage_guard()
    path = tmp_path / "floor.txt"
    g.write_floor(57.3, ["app/x.py", "app/y.py"], path)
    assert g.read_floor(path) == (57.3, ["app/x.py", "app/y.py"])
    path.write_text("floor 50\nperfekt app/x.py\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"floor\.txt:2: expected 'floor <percent>' or 'perfect <path>'"):
        g.read_floor(path)


def test_the_committed_floor_pins_modules_that_exist_and_ci_checks_it():
    g = _coverage_guard()
    floor, perfect = g.read_floor()
    assert floor > 0 and perfect
    assert [p for p in perfect if not (ROOT / p).is_file()] == []
    assert "stage coverage .venv/bin/python .ci/coverage_floor.py" in (ROOT / ".ci" / "run").read_text()

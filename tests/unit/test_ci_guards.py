"""The typing ratchet (.ci/mypy_ratchet.py): a file may not gain errors, and a strict file that is clean stays
clean. The complexity guard (bootstrap.sh's test stage): no function in app/engine above complexity 15."""

from __future__ import annotations

import importlib.util
import shlex
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


def _complexity_guard() -> list[str]:
    """The complexity guard's command, as bootstrap.sh's test stage runs it (its one C901 line)."""
    lines = [ln for ln in (ROOT / "bootstrap.sh").read_text().splitlines() if "C901" in ln]
    assert len(lines) == 1, lines
    cmd = shlex.split(lines[0], comments=True)
    assert cmd[0] == ".venv/bin/ruff" and cmd[-1] == "app/engine", cmd  # it guards the engine
    return [str(RUFF), *cmd[1:]]


def _function(name: str, branches: int) -> str:
    """A function of complexity ``branches`` + 1."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(branches))
    return f"def {name}(x):\n{body}    return -1\n"


@needs_ruff
def test_the_complexity_guard_fails_on_a_function_over_15_and_names_it(tmp_path):
    engine = tmp_path / "engine"
    engine.mkdir()
    (engine / "ok.py").write_text(_function("at_the_limit", 14))
    guard = _complexity_guard()[:-1]
    passed = subprocess.run([*guard, str(engine)], cwd=ROOT, capture_output=True, text=True)
    assert passed.returncode == 0, passed.stdout + passed.stderr  # complexity 15 is allowed
    (engine / "bad.py").write_text(_function("too_tangled", 15))
    failed = subprocess.run([*guard, str(engine)], cwd=ROOT, capture_output=True, text=True)
    assert failed.returncode == 1
    assert "`too_tangled` is too complex (16 > 15)" in failed.stdout
    assert "at_the_limit" not in failed.stdout


@needs_ruff
def test_no_engine_function_is_above_complexity_15():
    run = subprocess.run(_complexity_guard(), cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr

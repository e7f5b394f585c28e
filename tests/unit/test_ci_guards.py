"""The typing ratchet (.ci/mypy_ratchet.py): a file may not gain errors, and a strict file that is clean stays
clean."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

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

"""A run stored without validity notes (as Fiometer stored runs before it kept them) opens in History: the
notes are computed off the GUI thread ("computing…" meanwhile), shown, and kept with the run, so the next
opening reads them instead of reading every sample again; nothing measured changes. When the database
cannot keep them (read-only, or another writer holds it) they are shown all the same.

Real fio (a two-step CLI run: buffered reads of a small file, then writes of Iometer's repeating bytes: a
cache and a compressible note), real SQLite, real widgets offscreen."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.analysis import validity
from app.analysis.validity import Note, lines, notes_kept, notes_of, run_notes
from app.model import planfile
from app.model.plan import SpecLine
from app.store import get_run, open_store, step_samples
from app.store.database import open_store_readonly
from app.store.queries import steps_interval_ios
from app.store.run_extras import stored_notes
from tests.helpers import grid, spec

pytestmark = [pytest.mark.fio, pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")]

# notes made from facts only a running run can see (the host's CPU, how much of a file was written): a run
# stored without notes cannot have them back, so they are left out where old and new are compared
FACT_KINDS = {validity.GENERATOR, validity.NEVER_WRITTEN}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding run 1, recorded by the real CLI (its notes kept when it ended, as today)."""
    tmp = tmp_path_factory.mktemp("notes-on-open")
    plan = grid(1, 1, 1, specs=("R", "W"))
    plan.specs = [
        spec("R", SpecLine(4096, 100, 100, 100, 0, 1, 0, 0)),
        spec("W", SpecLine(4096, 100, 0, 100, 0, 1, 0, 0)),
    ]
    worker = plan.managers[0].workers[0]
    worker.targets[0].name = "T"
    worker.data_pattern = 0  # Iometer's repeating bytes: compressible writes
    plan.setup.run_time = 2
    plan.setup.direct_io = False  # buffered reads of 16 MiB: the cache note
    path = tmp / "plan.json"
    planfile.save(plan, path)
    db = tmp / "runs.db"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db),
            "run",
            str(path),
            "--map",
            f"T={tmp / 'small.dat'}",
        ]
        + ["--test-file-size", "16M"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return db


def old_way(recorded: Path, tmp_path: Path) -> tuple[Path, list[Note]]:
    """A copy of the database whose run 1 lacks its notes, as an older Fiometer stored it, and the notes the
    run kept when it ended."""
    db = tmp_path / "old.db"
    shutil.copy(recorded, db)
    with open_store(db) as store:
        kept = stored_notes(get_run(store, 1, result_levels=()))
    assert kept is not None
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE runs SET host_json = json_remove(host_json, '$.validity') WHERE id = 1")
    conn.close()
    return db, [Note.from_json(d) for d in kept]


def comparable(notes: list[Note]) -> list[tuple]:
    return sorted(
        (n.kind, n.step, n.manager, n.text, n.advice, n.figure) for n in notes if n.kind not in FACT_KINDS
    )


def measured(db: Path) -> dict[str, list]:
    """Every row of every table, the runs' host facts without the notes' key: what must never change."""
    import json

    conn = sqlite3.connect(db)
    try:
        out = {}
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
            rows = [list(r) for r in conn.execute(f'SELECT * FROM "{table}"')]
            if table == "runs":
                col = [d[1] for d in conn.execute("PRAGMA table_info(runs)")].index("host_json")
                for r in rows:
                    host = json.loads(r[col])
                    host.pop("validity", None)
                    r[col] = host
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        conn.close()


def counting_run_notes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each computation of a run's notes from its samples and fio's outputs (on the store's thread)."""
    calls: list[int] = []

    def counted(run, *args, **kwargs):
        calls.append(run.id)
        return run_notes(run, *args, **kwargs)

    monkeypatch.setattr(validity, "run_notes", counted)
    return calls


def open_view(db: Path, qtbot):
    from app.ui.history.run_view import RunView
    from app.ui.history.store_tasks import StoreTasks

    tasks = StoreTasks(db)
    view = RunView(1, tasks)
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    seen: list[str] = []
    view.validity.label.setText = lambda text, _set=view.validity.label.setText: (
        seen.append(text),
        _set(text),
    )
    view.load()
    qtbot.waitUntil(lambda: view.data is not None and not tasks.busy, timeout=60000)
    return view, seen


def test_an_old_run_gets_its_notes_computed_once_and_kept(recorded, tmp_path, qtbot, monkeypatch) -> None:
    db, new_run_notes = old_way(recorded, tmp_path)
    assert {n.kind for n in new_run_notes} >= {validity.CACHE, validity.COMPRESSIBLE}
    before = measured(db)
    calls = counting_run_notes(monkeypatch)

    view, seen = open_view(db, qtbot)
    assert calls == [1]  # computed once, on opening
    assert seen[0].startswith("Validity notes: computing")  # said while the store's thread worked
    shown = [n for n in view.validity.lines]
    assert comparable_lines(shown) == comparable_lines(lines(new_run_notes))  # what a new run shows
    with open_store(db) as store:
        kept = [Note.from_json(d) for d in stored_notes(get_run(store, 1, result_levels=())) or []]
    assert comparable(kept) == comparable(new_run_notes) and lines(kept) == shown
    assert measured(db) == before  # no measured number changed, nothing lost
    shot = tmp_path / "old-run-notes.png"
    assert view.grab().save(str(shot))
    print(f"screenshot: {shot}")

    calls.clear()
    again, seen = open_view(db, qtbot)
    assert calls == []  # read with the run: not computed again
    assert not any(t.startswith("Validity notes: computing") for t in seen)
    assert again.validity.lines == shown


def comparable_lines(shown: list[str]) -> list[str]:
    titles = {validity.TITLES[k] for k in FACT_KINDS}
    return sorted(line for line in shown if not any(line.startswith(t) for t in titles))


def test_notes_are_shown_when_the_database_cannot_keep_them(recorded, tmp_path) -> None:
    db, new_run_notes = old_way(recorded, tmp_path)
    store, _note = open_store_readonly(db)
    with store:
        notes, how = notes_kept(store, get_run(store, 1))
    assert how == "computed" and comparable(notes) == comparable(new_run_notes)

    with open_store(db) as store:
        run = get_run(store, 1)
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer (a recording run) holds the database
        try:
            t0 = time.monotonic()
            notes, how = notes_kept(store, run)
            waited = time.monotonic() - t0
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert how == "computed" and comparable(notes) == comparable(new_run_notes)
        assert waited < 10  # not the store's 15-s wait for a lock
        assert stored_notes(get_run(store, 1, result_levels=())) is None  # kept next time, when it can be
        notes, how = notes_kept(store, run)
        assert how == "computed and kept"


def test_a_run_still_recording_is_not_given_notes(recorded, tmp_path) -> None:
    db, _notes = old_way(recorded, tmp_path)
    with open_store(db) as store:
        run = get_run(store, 1)
        run.status = "running"  # its recorder keeps the notes (with its facts) when it ends
        _shown, how = notes_kept(store, run)
        assert how == "computed" and stored_notes(get_run(store, 1, result_levels=())) is None


def test_the_notes_read_from_arrays_are_those_read_sample_by_sample(recorded, tmp_path) -> None:
    """`fiometer show/compare/report` compute an old run's notes the same way: the per-second ALL numbers the
    steadiness rule reads, taken from the stored arrays, equal those of every sample's Metrics, and the notes
    equal those of the previous way (every result and histogram read, samples one by one)."""
    db, _notes = old_way(recorded, tmp_path)
    with open_store(db) as store:
        run = get_run(store, 1)
        by_step = steps_interval_ios(store, [s.id for s in run.steps], "all", "ALL")
        previous = {
            s.index: [(t, m.ios, m.seconds) for t, m in step_samples(store, s.id, "all", "ALL")]
            for s in run.steps
        }
        assert all(previous.values())
        assert {s.index: by_step[s.id] for s in run.steps} == previous
        assert all(
            type(a[1]) is type(b[1])
            for s in run.steps
            for a, b in zip(by_step[s.id], previous[s.index], strict=True)
        )
        assert notes_of(run, store) == run_notes(get_run(store, 1, raw_output=True), previous)

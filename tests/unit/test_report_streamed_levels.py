"""A report's sides hold ALL's and the managers' results only; the workers' and targets' (most of a long run's
memory) are read a step at a time as the data sheet and CSV are written: while the store is open, after it
was closed, and from another thread, the rows are the same as the steps' own."""

from __future__ import annotations

import csv
import io
import threading

from app.report.csv_out import render_csv
from app.report.document import build_report
from app.report.long_form import long_rows
from app.store.database import open_store
from app.store.queries import get_run
from tests.stored_runs import AFTER, BEFORE, RunSpec, record


def test_every_level_reaches_the_csv_open_closed_and_from_another_thread(tmp_path):
    with open_store(tmp_path / "s.db") as s:
        record(s, RunSpec(BEFORE, tags=["before"]))
        record(s, RunSpec(AFTER, tags=["after"]))
        report = build_report(s, [1], [[2]])
        full = [(get_run(s, 1), "before"), (get_run(s, 2), "after")]
        expected = list(long_rows(full, report.validity_notes))  # each step's own results, every level
        assert {r.level for sec in report.runs for st in sec.run.steps for r in st.results} == {
            "all",
            "manager",
        }
        while_open = render_csv(report)
    assert {r[5] for r in expected} == {"all", "manager", "worker", "target"}
    after_close = render_csv(report)
    from_thread: list[str] = []
    t = threading.Thread(target=lambda: from_thread.append(render_csv(report)))
    t.start()
    t.join()
    assert while_open == after_close == from_thread[0]
    rows = list(csv.reader(io.StringIO(while_open.lstrip("\ufeff"))))
    assert len(rows) - 1 == len(expected)
    assert {(r[0], r[2], r[5], r[8]) for r in rows[1:]} == {
        (str(e[0]), str(e[2]), e[5], e[8]) for e in expected
    }


def test_the_writers_close_the_connection_they_read_through_on_their_thread(tmp_path, monkeypatch):
    """A report written on another thread (the window's store task) reads each step through a connection of
    that thread's own: closed there when the writing ends, not left for the collector (closed from another
    thread it stayed open: Python 3.13's 'unclosed database' ResourceWarning)."""
    import sqlite3

    from app.report.xlsx import write_xlsx

    made: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def recorded(*args, **kwargs):
        conn = connect(*args, **kwargs)
        made.append(conn)
        return conn

    def still_open(conn: sqlite3.Connection) -> bool:
        try:
            conn.total_changes  # noqa: B018 - raises once closed
        except sqlite3.ProgrammingError as e:
            return "closed" not in str(e)  # (another thread's: open, but not ours to ask)
        return True

    with open_store(tmp_path / "s.db") as s:
        record(s, RunSpec(BEFORE, tags=["before"]))
        record(s, RunSpec(AFTER, tags=["after"]))
        report = build_report(s, [1], [[2]])
        monkeypatch.setattr(sqlite3, "connect", recorded)
        for write in (render_csv, lambda r: write_xlsx(r, tmp_path / "r.xlsx")):
            made.clear()
            left: list[bool] = []

            def on_its_thread(w=write, left=left) -> None:
                w(report)
                left.extend(still_open(c) for c in made)

            t = threading.Thread(target=on_its_thread)
            t.start()
            t.join()
            assert left and not any(left), left  # it read through its own connection, and closed it

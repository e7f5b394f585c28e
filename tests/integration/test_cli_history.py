"""`fiometer tag / note / rename / delete` change the stored run, and refuse clearly."""

from __future__ import annotations

import pytest

from app.cli import main
from app.store.database import open_store
from app.store.queries import get_run, list_runs
from tests.stored_runs import BEFORE, RunSpec, record


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "h.db"
    with open_store(path) as store:
        record(store, RunSpec(BEFORE, name="EVA before", tags=["before"]))
    return path


def summary(db):
    with open_store(db) as store:
        (r,) = list_runs(store)
        return get_run(store, r.id)


def test_tag_adds_and_removes(db, capsys):
    assert main(["--db", str(db), "tag", "1", "client-x", "vraid5"]) == 0
    assert summary(db).tags == ["before", "client-x", "vraid5"]
    assert main(["--db", str(db), "tag", "1", "vraid5", "before", "--remove"]) == 0
    assert summary(db).tags == ["client-x"]
    assert "Run 1 tags: client-x" in capsys.readouterr().out


def test_note_and_rename(db):
    assert main(["--db", str(db), "note", "1", "32 disks, Vraid5, firmware 1.2"]) == 0
    assert main(["--db", str(db), "rename", "1", "EVA 4400 Vraid5"]) == 0
    run = summary(db)
    assert (run.notes, run.name) == ("32 disks, Vraid5, firmware 1.2", "EVA 4400 Vraid5")
    assert main(["--db", str(db), "note", "1", ""]) == 0
    assert summary(db).notes == ""


def test_delete_needs_yes_and_says_what_it_would_delete(db, capsys):
    assert main(["--db", str(db), "delete", "1"]) == 2
    err = capsys.readouterr().err
    assert "would delete run 1 'EVA before' (complete, 4 steps" in err and "--yes" in err
    assert summary(db).id == 1
    assert main(["--db", str(db), "delete", "1", "--yes"]) == 0
    with open_store(db) as store:
        assert list_runs(store) == []


@pytest.mark.parametrize(
    "argv", [["tag", "7", "x"], ["note", "7", "x"], ["rename", "7", "x"], ["delete", "7", "--yes"]]
)
def test_unknown_run_is_a_clear_error(db, capsys, argv):
    assert main(["--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert "no run 7" in err and "Traceback" not in err


def test_empty_name_or_tag_is_refused(db, capsys):
    assert main(["--db", str(db), "rename", "1", "  "]) == 2
    assert main(["--db", str(db), "tag", "1", " "]) == 2
    assert summary(db).name == "EVA before"

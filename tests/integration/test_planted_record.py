"""Issue 35.6: the record of Fiometer's test files (DB.test-files.json) planted as a symlink. Refusing to write
through the link is right; the run must not crash for it after its I/O: its results are stored, and a message
names the record and what to do. Real fio (psync on a small file), a real database."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engine.guards.safety import record_beside
from app.engine.run.managers import build_endpoints
from app.engine.run.runner import Runner, RunOptions
from app.model.plan import LOCAL
from app.session.recording import Fanout, StoreRecorder
from app.store import get_run, open_store
from tests.helpers import prepared
from tests.integration.test_remote_faults import Collect, plan_for

pytestmark = pytest.mark.fio


def test_a_record_planted_as_a_link_is_refused_with_words_and_the_results_are_stored(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    registry = record_beside(db)
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    registry.path.symlink_to(precious)
    plan = plan_for(tmp_path, 1)
    plan.managers[0].host = LOCAL
    collect = Collect()
    with open_store(db) as store:
        recorder = StoreRecorder(store)
        runner = prepared(
            Runner(
                plan,
                build_endpoints(plan),
                Fanout(recorder, collect),
                RunOptions(run_time=1, ramp_up=0, file_size=1 << 20, registry=registry),
            )
        )
        assert runner.run() == "complete", [m.text for m in collect.messages]
        run = get_run(store, recorder.run_id)
    assert precious.read_text() == "keep me\n" and registry.path.is_symlink()  # nothing written through it
    said = [m.text for m in collect.messages if str(registry.path) in m.text]
    assert len(said) == 1 and "link" in said[0], said
    assert "Remove or rename" in said[0] and "results are stored" in said[0]
    assert run.status == "complete" and run.steps[0].results  # the step's numbers are in the store
    assert any(r.level == "manager" and r.metrics.ios > 0 for r in run.steps[0].results)


def test_doctor_set_fio_refuses_a_settings_file_planted_as_a_link(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """`doctor --set-fio` (the real fio) with settings.json planted as a symlink: refused with the path and
    what to do, exit 2, the link's target untouched (before: internal error, exit 5)."""
    import shutil

    from app import user_settings
    from app.cli import main

    monkeypatch.setenv(user_settings.ENV_DIR, str(tmp_path / "settings"))
    settings = user_settings.settings_path()
    settings.parent.mkdir(parents=True)
    precious = tmp_path / "precious.json"
    precious.write_text("{}\n")
    settings.symlink_to(precious)
    fio = shutil.which("fio")
    assert fio is not None
    assert main(["--db", str(tmp_path / "r.db"), "doctor", "--set-fio", fio]) == 2
    err = capsys.readouterr().err
    assert f"not saved: the settings file cannot be written: {settings}" in err, err
    assert "link" in err and "Remove or rename it" in err and "internal error" not in err
    assert precious.read_text() == "{}\n"

"""`fiometer examples` and `fiometer doctor`: what a newcomer types first."""

import pytest

from app.cli import main
from app.model import planfile
from app.model.examples import EXAMPLES, TESTFILE
from tests.unit.test_fio_binary import make_exe


def test_examples_lists_every_example(capsys):
    assert main(["examples"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for i, ex in enumerate(EXAMPLES):
        assert lines[i].split()[0] == ex.key
        assert f"{ex.title}: {ex.description}" in lines[i]
    assert "--save DIR" in out and f"--map '{TESTFILE}=" in out


def test_examples_save_writes_loadable_plans(tmp_path, capsys):
    out_dir = tmp_path / "plans"
    assert main(["examples", "--save", str(out_dir)]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(f"{e.key}.json" for e in EXAMPLES)
    for ex in EXAMPLES:
        plan, problems = planfile.load(out_dir / f"{ex.key}.json")
        assert problems == []
        assert plan.source == str(out_dir / f"{ex.key}.json")
        plan.source = ""  # the one field loading sets: where the plan came from
        assert planfile.to_dict(plan) == planfile.to_dict(ex.build())
    capsys.readouterr()
    # a saved example is an ordinary plan for the other commands
    assert main(["plan", str(out_dir / "crystal.json"), "--steps"]) == 0
    assert "4 steps" in capsys.readouterr().out


def test_examples_save_into_a_file_is_an_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["examples", "--save", str(blocker / "sub")]) == 2
    assert "cannot save the examples" in capsys.readouterr().err


@pytest.fixture
def no_fio_anywhere(monkeypatch, tmp_path):
    monkeypatch.delenv("FIOMETER_FIO", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


def test_doctor_with_fio(no_fio_anywhere, tmp_path, capsys):
    fake = make_exe(tmp_path / "bin" / "fio", "#!/bin/sh\necho fio-3.41\n")
    assert main(["--db", str(tmp_path / "r.db"), "doctor", "--set-fio", str(fake)]) == 0
    out = capsys.readouterr().out
    assert f"fio 3.41 at {fake} saved in " in out
    assert "\nfio: 3.41\n" in out and "\nPython: " in out
    assert f"Custom fio path: {fake}" in out
    assert f"Results database: {tmp_path / 'r.db'}" in out
    assert f"fio 3.41 found from your settings: {fake}" in out
    assert "(MISSING" not in out
    assert not (tmp_path / "r.db").exists()  # doctor only says where it is
    assert main(["doctor", "--clear-fio"]) == 1  # forgotten, and nothing else on PATH
    out = capsys.readouterr().out
    assert "custom fio path removed" in out and "fio was not found" in out


def test_doctor_without_fio_says_how_to_install(no_fio_anywhere, capsys):
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "fio: not found" in out
    assert "sudo apt-get install fio" in out  # this suite runs on Linux


def test_doctor_refuses_to_save_something_that_is_not_fio(no_fio_anywhere, tmp_path, capsys):
    from app import user_settings

    impostor = make_exe(tmp_path / "fio", "#!/bin/sh\necho hello\n")
    assert main(["doctor", "--set-fio", str(impostor)]) == 2
    assert "not saved" in capsys.readouterr().err
    assert not user_settings.settings_path().exists()
    assert main(["doctor", "--set-fio", str(tmp_path / "nope")]) == 2
    assert not user_settings.settings_path().exists()

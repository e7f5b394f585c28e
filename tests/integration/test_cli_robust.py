"""No traceback anywhere in the CLI: bad plans, unreadable files, out-of-range numbers, missing folders,
`--db` after the command, escaped control characters, and the one handler for the unexpected."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from app import diagnostics
from app.cli import entry, main, results_commands
from app.cli.common import EXIT_INPUT, EXIT_INTERNAL, escape_controls
from app.model import planfile
from app.model.examples import EXAMPLES
from app.store import open_store
from app.store.recorder import Recorder


@pytest.fixture
def plan_dict():
    return planfile.to_dict(EXAMPLES[0].build())


def _write(tmp_path, name, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _bad_plans(d: dict) -> dict[str, tuple[dict | str, str]]:
    unknown = copy.deepcopy(d)
    unknown["plan"]["setup"]["test_type"] = "BOGUS"
    no_lines = copy.deepcopy(d)
    no_lines["plan"]["specs"][0]["lines"] = []
    missing = copy.deepcopy(d)
    missing["plan"]["managers"][0]["workers"][0]["specs"] = ["No such spec"]
    deep = '{"format": "fiometer-plan", "version": 1, "plan": ' + "[" * 100_000 + "]" * 100_000 + "}"
    return {
        "unknown test type": (unknown, "Test Setup, cycling options: must be one of"),
        "spec with no lines": (
            no_lines,
            'access specification "OLTP 8k 70/30", lines: must have 1 to 100 lines, has 0',
        ),
        "worker assigned a missing spec": (
            missing,
            "assigned spec 'No such spec' is not defined in the plan",
        ),
        "absurd nesting": (deep, "nested too deeply"),
    }


@pytest.mark.parametrize(
    "case", ["unknown test type", "spec with no lines", "worker assigned a missing spec", "absurd nesting"]
)
@pytest.mark.parametrize("command", [["plan"], ["plan", "--jobs", "JOBS"], ["import"], ["run"]])
def test_bad_plan_files_are_refused_in_words_before_expansion(tmp_path, capsys, plan_dict, case, command):
    data, words = _bad_plans(plan_dict)[case]
    path = _write(tmp_path, "bad.json", data)
    argv = (
        [a.replace("JOBS", str(tmp_path / "jobs")) for a in command[:1]]
        + [path]
        + [a.replace("JOBS", str(tmp_path / "jobs")) for a in command[1:]]
    )
    if command == ["run"]:
        argv += ["--map", f"TESTFILE={tmp_path / 't.tst'}", "--db", str(tmp_path / "r.db")]
    assert main(argv) == EXIT_INPUT
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and "internal error" not in err
    assert not (tmp_path / "t.tst").exists()


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling link", "folder named .icf"])
def test_unreadable_plan_files_are_reported_like_any_bad_file(tmp_path, kind):
    if kind == "folder":
        path = tmp_path / "plans"
        path.mkdir()
        words = "is a folder, not a plan file"
    elif kind == "folder named .icf":
        path = tmp_path / "old.icf"
        path.mkdir()
        words = "is a folder, not a plan file"
    elif kind == "fifo":
        path = tmp_path / "plan.json"
        os.mkfifo(path)
        words = "is not a regular file"
    else:
        path = tmp_path / "plan.json"
        path.symlink_to(tmp_path / "gone.json")
        words = "is a link to a file that does not exist"
    for command in (["plan"], ["import"], ["run"]):
        # a subprocess: reading a FIFO would wait for ever; the timeout turns that into a failure
        out = subprocess.run(
            [sys.executable, "-m", "app.cli", *command, str(path)], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == EXIT_INPUT, out.stderr
        assert words in out.stderr and str(path) in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "PLAN", "--run-time", "-5"],
        ["run", "PLAN", "--run-time", "1e9"],
        ["run", "PLAN", "--ramp-up", "-1"],
        ["run", "PLAN", "--run-time", "ten"],
        ["probe", "127.0.0.1", "--timeout", "-1"],
        ["probe", "127.0.0.1", "--timeout", "nan"],
        ["probe", "127.0.0.1", "--timeout", "inf"],
        ["gui", "--screenshot", "x", "--run", "0"],
    ],
)
def test_numeric_options_are_range_checked(tmp_path, capsys, argv):
    path = _write(tmp_path, "p.json", planfile.to_dict(EXAMPLES[0].build()))
    with pytest.raises(SystemExit) as exc:
        main([path if a == "PLAN" else a for a in argv])
    assert exc.value.code == EXIT_INPUT
    err = capsys.readouterr().err
    assert ("must be from" in err or "is not a" in err) and "Traceback" not in err


def test_test_file_size_is_range_checked(tmp_path, capsys):
    path = _write(tmp_path, "p.json", planfile.to_dict(EXAMPLES[0].build()))
    for size in ("0", "12", "2048T"):
        assert (
            main(
                [
                    "run",
                    path,
                    "--test-file-size",
                    size,
                    "--map",
                    f"TESTFILE={tmp_path / 't'}",
                    "--db",
                    str(tmp_path / "r.db"),
                ]
            )
            == EXIT_INPUT
        )
        assert "must be from 4K to 1024T" in capsys.readouterr().err


def _db_with_a_run(path) -> int:
    with open_store(path) as store:
        rec = Recorder(store)
        run_id = rec.begin_run(
            planfile.to_dict(EXAMPLES[0].build()), plan_name="p", name="stored \x1b[31mred"
        )
        rec.end_run(run_id, "complete")
    return run_id


def test_export_to_a_missing_folder_says_so(tmp_path, capsys):
    db = tmp_path / "r.db"
    run_id = _db_with_a_run(db)
    target = tmp_path / "no" / "such" / "out.csv"
    assert main(["export", str(run_id), "--iometer-csv", str(target), "--db", str(db)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert f"the folder {target.parent} does not exist" in err and "Traceback" not in err


def test_import_output_to_a_missing_folder_says_so(tmp_path, capsys):
    path = _write(tmp_path, "p.json", planfile.to_dict(EXAMPLES[0].build()))
    assert main(["import", path, "-o", str(tmp_path / "missing" / "plan.json")]) == EXIT_INPUT
    assert "does not exist" in capsys.readouterr().err


def test_db_is_accepted_after_every_command(tmp_path, capsys):
    parser = entry.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():
        assert any("--db" in a.option_strings for a in command._actions), name
    db = tmp_path / "after.db"
    run_id = _db_with_a_run(db)
    assert main(["runs", "--db", str(db)]) == 0
    assert "stored" in capsys.readouterr().out
    assert main(["show", str(run_id), "--db", str(db)]) == 0
    assert f"Run {run_id}" in capsys.readouterr().out
    # before the command still works, and the one after the command wins
    other = tmp_path / "other.db"
    assert main(["--db", str(other), "runs", "--db", str(db)]) == 0
    assert "stored" in capsys.readouterr().out
    assert main(["--db", str(db), "runs"]) == 0
    assert "stored" in capsys.readouterr().out


def test_control_characters_from_files_are_shown_escaped(tmp_path, capfd):
    plan = EXAMPLES[0].build()
    plan.name = "evil\x1b]0;pwned\x07 plan"
    old, plan.specs[0].name = plan.specs[0].name, "spec\x1b[2J\rX"
    for w in (w for m in plan.managers for w in m.workers):
        w.specs = [plan.specs[0].name if s == old else s for s in w.specs]
    path = tmp_path / "p.json"
    planfile.save(plan, path)
    assert main(["import", str(path)]) == 0
    db = tmp_path / "r.db"
    run_id = _db_with_a_run(db)
    assert main(["runs", "--db", str(db)]) == 0
    assert main(["show", str(run_id), "--db", str(db)]) == 0
    out = capfd.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert (
        "evil\\x1b]0;pwned\\x07 plan" in out and "spec\\x1b[2J\\x0dX" in out and "stored \\x1b[31mred" in out
    )


def test_escape_controls_keeps_text_and_newlines():
    assert escape_controls("plain, ünïcode – fine\n\tindented") == "plain, ünïcode – fine\n\tindented"
    assert escape_controls("a\x1bb\x00c\x7fd\u202ee\x9bf") == "a\\x1bb\\x00c\\x7fd\\u202ee\\x9bf"


def test_anything_unexpected_is_one_line_and_a_log_file(tmp_path, capsys, monkeypatch):
    def broken(args):
        raise ZeroDivisionError("the unexpected")

    monkeypatch.setattr(results_commands, "cmd_runs", broken)
    assert main(["runs", "--db", str(tmp_path / "r.db")]) == EXIT_INTERNAL
    err = capsys.readouterr().err.strip()
    log = diagnostics.log_path()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "ZeroDivisionError: the unexpected" in err and str(log) in err
    text = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "ZeroDivisionError: the unexpected" in text
    assert "in broken" in text


def test_doctor_prints_the_log_path(capsys):
    main(["doctor"])
    out = capsys.readouterr().out
    assert f"Log file: {diagnostics.log_path()}" in out
    assert str(diagnostics.log_dir()) == os.environ[diagnostics.ENV_DIR]

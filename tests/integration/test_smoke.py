"""`fiometer --smoke` as a user (or the build script) runs it: a subprocess, exit code and one line."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app import __version__
from tests.helpers import BLOCK_QT

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"^fiometer smoke ok: Fiometer (?P<fm>\S+), Python (?P<py>\S+), fio (?P<fio>[\d.]+)(?P<qt>, Qt .*)?; "
    r"gui: (?P<gui>[^;]+); vmware-unofficial-storage-performance\.icf \(.*\) step 1 '(?P<step>[^']+)', "
    r"1 s on fio's null engine: (?P<iops>[\d,]+) IOPS .*\[\d+\.\d s\]$"
)


def run_smoke(tmp_path: Path, *, code: str | None = None, **env: str) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    environ = {
        k: v for k, v in os.environ.items() if k not in ("FIOMETER_DB", "FIOMETER_FIO", "QT_QPA_PLATFORM")
    }
    environ.update(
        HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"), **env
    )
    environ.pop("FIOMETER_SETTINGS_DIR", None)  # the smoke check must itself keep away from the user's files
    argv = [sys.executable, "-c", code] if code else [sys.executable, "-m", "app.cli", "--smoke"]
    return subprocess.run(argv, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)


def user_files(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "home").rglob("*") if p.is_file())


@pytest.mark.fio
def test_smoke_from_source_prints_one_line_and_touches_no_user_files(tmp_path):
    out = run_smoke(tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 1, out.stdout
    m = LINE.match(lines[0])
    assert m, lines[0]
    assert m["fm"] == __version__ and m["py"] == ".".join(map(str, sys.version_info[:3]))
    assert m["qt"] and m["gui"].startswith(
        "main window (offscreen, 'vmware-unofficial-storage-performance.icf"
    )
    assert out.stderr == ""
    assert m["step"] == "Max Throughput-100%Read"
    assert int(m["iops"].replace(",", "")) > 1000  # the null engine does at least thousands per second
    assert user_files(tmp_path) == []  # no database, settings or test file in the user's folders


@pytest.mark.fio
def test_smoke_without_qt_runs_the_engine_only(tmp_path):
    out = run_smoke(tmp_path, code=BLOCK_QT + "from app.cli import main\nsys.exit(main(['--smoke']))\n")
    assert out.returncode == 0, out.stderr
    m = LINE.match(out.stdout.strip())
    assert m, out.stdout
    assert m["qt"] is None and m["gui"] == "none (PySide6 is not installed: engine only)"


def test_smoke_fails_with_the_reason_when_fio_is_missing(tmp_path):
    out = run_smoke(tmp_path, FIOMETER_FIO=str(tmp_path / "no-such-fio"))
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.strip().splitlines()[-1].startswith("fiometer smoke FAILED: FIOMETER_FIO points to ")
    assert "apt-get install fio" in out.stderr


def test_smoke_fails_when_fio_is_not_fio(tmp_path):
    impostor = tmp_path / "fio"
    impostor.write_text("#!/bin/sh\necho 'not a benchmark'\n")
    impostor.chmod(0o755)
    out = run_smoke(tmp_path, FIOMETER_FIO=str(impostor))
    assert out.returncode == 1
    assert "fiometer smoke FAILED: " in out.stderr and "does not look like fio" in out.stderr


@pytest.mark.fio
def test_smoke_fails_when_fio_fails(tmp_path):
    # a "fio" that answers --version but dies when asked to run: the run must be reported as failed
    fake = tmp_path / "fio"
    fake.write_text(
        '#!/bin/sh\nif [ "$1" = --version ]; then echo fio-3.33; exit 0; fi\necho boom >&2\nexit 1\n'
    )
    fake.chmod(0o755)
    out = run_smoke(tmp_path, FIOMETER_FIO=str(fake))
    assert out.returncode == 1, out.stdout
    assert "fiometer smoke FAILED: the run ended failed" in out.stderr

"""packaging/build.sh end to end: PyInstaller build, frozen smoke test, install.sh into a prefix.

Takes about two minutes (a build virtualenv, then PyInstaller), so it runs in CI (CI=true) or when
FIOMETER_TEST_BUILD=1; elsewhere it is skipped with that reason.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app import __version__

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "io.github.fiometer.Fiometer"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.fio,
    pytest.mark.skipif(
        not (os.environ.get("CI") or os.environ.get("FIOMETER_TEST_BUILD")),
        reason="builds the packaged app (~2 min): set FIOMETER_TEST_BUILD=1; CI runs it",
    ),
]


@pytest.fixture(scope="module")
def build() -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "FIOMETER_SETTINGS_DIR")}
    env["FIOMETER_NO_TAR"] = "1"
    return subprocess.run(
        ["bash", "packaging/build.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500
    )


def test_build_succeeds_and_the_frozen_smoke_test_passes(build):
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    smoke = [ln for ln in build.stdout.splitlines() if ln.startswith("fiometer smoke ok: ")]
    assert len(smoke) == 1, build.stdout
    assert f"Fiometer {__version__}, " in smoke[0] and ", Qt 6." in smoke[0] and " IOPS " in smoke[0]
    assert "build: dist/fiometer " in build.stdout


def test_the_folder_holds_resources_and_desktop_files(build):
    out = ROOT / "dist" / "fiometer"
    assert os.access(out / "fiometer", os.X_OK)
    internal = out / "_internal"
    assert (internal / "resources" / "examples" / "vmware-unofficial-storage-performance.icf").is_file()
    assert (internal / "resources" / "icons" / "fiometer.svg").is_file()
    assert (internal / "THIRD-PARTY.txt").is_file()
    assert not list(out.rglob("fio")) and not list(out.rglob("fio.exe"))  # fio is never bundled
    assert not list(internal.glob("pytest*")) and not (internal / "hypothesis").exists()
    for rel in (
        f"share/applications/{APP_ID}.desktop",
        f"share/metainfo/{APP_ID}.metainfo.xml",
        f"share/icons/hicolor/256x256/apps/{APP_ID}.png",
        "install.sh",
    ):
        assert (out / rel).is_file(), rel


def test_frozen_cli_commands(build, tmp_path):
    exe = ROOT / "dist" / "fiometer" / "fiometer"
    env = {**os.environ, "FIOMETER_SETTINGS_DIR": str(tmp_path / "cfg")}
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, env=env)
    assert version.stdout.strip() == f"fiometer {__version__}"
    saved = subprocess.run(
        [exe, "examples", "--save", tmp_path / "ex"], capture_output=True, text=True, env=env
    )
    assert saved.returncode == 0, saved.stderr
    assert (tmp_path / "ex" / "oltp.json").is_file()
    doctor = subprocess.run(
        [exe, "--db", tmp_path / "r.db", "doctor"], capture_output=True, text=True, env=env
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "(packaged build)" in doctor.stdout and "fio 3." in doctor.stdout
    assert f"Bundled resources: {ROOT / 'dist' / 'fiometer' / '_internal' / 'resources'}\n" in doctor.stdout


def test_frozen_app_runs_a_remote_manager_through_its_remote_host(build, tmp_path, fio_server):
    """The packaged app reads fio servers in a child that is itself started with --remote-host."""
    from app.model import planfile
    from app.model.plan import SpecLine, Target
    from tests.helpers import grid

    host, port, _ = fio_server("127.0.0.2")
    plan = grid(1, 1, 1)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = None
    plan.managers[0].workers[0].targets = [Target(str(tmp_path / "t.tst"))]
    planfile.save(plan, tmp_path / "plan.json")
    exe = ROOT / "dist" / "fiometer" / "fiometer"
    env = {**os.environ, "FIOMETER_SETTINGS_DIR": str(tmp_path / "cfg")}
    out = subprocess.run(
        [
            exe,
            "--db",
            tmp_path / "r.db",
            "run",
            tmp_path / "plan.json",
            "--manager",
            f"M1={host}:{port}",
            "--run-time",
            "2",
            "--engine",
            "null",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"M1 on {host}:{port}" in out.stdout


def test_install_sh_into_a_prefix(build, tmp_path):
    prefix = tmp_path / "prefix"
    inst = subprocess.run(
        ["bash", ROOT / "dist" / "fiometer" / "install.sh", "--prefix", prefix],
        capture_output=True,
        text=True,
    )
    assert inst.returncode == 0, inst.stderr
    link = prefix / "bin" / "fiometer"
    assert link.is_symlink() and link.resolve() == (prefix / "opt" / "fiometer" / "fiometer").resolve()
    assert (
        subprocess.run([link, "--version"], capture_output=True, text=True).stdout.strip()
        == f"fiometer {__version__}"
    )
    desktop = prefix / "share" / "applications" / f"{APP_ID}.desktop"
    assert desktop.is_file() and (prefix / "share/icons/hicolor/scalable/apps" / f"{APP_ID}.svg").is_file()
    if shutil.which("desktop-file-validate"):
        assert subprocess.run(["desktop-file-validate", desktop]).returncode == 0
    gone = subprocess.run(
        ["bash", prefix / "opt" / "fiometer" / "install.sh", "--prefix", prefix, "--uninstall"],
        capture_output=True,
        text=True,
    )
    assert gone.returncode == 0, gone.stderr
    assert not link.exists() and not desktop.exists() and not (prefix / "opt" / "fiometer").exists()

"""The wheel stands alone: built from a copy of the source, installed into a new virtualenv outside the
checkout, its `fiometer --smoke` finds the bundled example plan and icons (package data) and runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.integration.test_smoke import LINE, user_files

ROOT = Path(__file__).resolve().parents[2]
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "tests",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
)


def pip(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    # pip's own download cache is shared with the developer's (PIP_CACHE_DIR etc. pass through)
    return subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1200,
    )


@pytest.mark.slow
@pytest.mark.fio
@pytest.mark.skipif(sys.platform == "win32", reason="the build scripts cover Windows")
def test_wheel_in_a_clean_virtualenv_outside_the_checkout_passes_smoke(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)  # builds write build/ and *.egg-info into the tree
    wheels = tmp_path / "wheels"
    built = pip(Path(sys.executable), "wheel", "--no-deps", "-w", str(wheels), str(src), cwd=tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("fiometer-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "app/resources/examples/vmware-unofficial-storage-performance.icf" in names
    assert "app/resources/icons/fiometer.svg" in names and "app/resources/icons/fiometer-256.png" in names

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    installed = pip(python, "install", str(wheel), cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    home = tmp_path / "home"
    home.mkdir()
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FIOMETER_DB", "FIOMETER_FIO", "QT_QPA_PLATFORM", "PYTHONPATH", "FIOMETER_SETTINGS_DIR")
    }
    environ.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"))
    out = subprocess.run(
        [str(env_dir / "bin" / "fiometer"), "--smoke"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert LINE.match(out.stdout.strip()), out.stdout
    assert user_files(tmp_path) == []
    doctor = subprocess.run(
        [str(env_dir / "bin" / "fiometer"), "doctor"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    resources = (
        env_dir
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
        / "app"
        / "resources"
    )
    assert f"Bundled resources: {resources}\n" in doctor.stdout, doctor.stdout

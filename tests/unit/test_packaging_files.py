"""Desktop entry, AppStream metainfo, PyInstaller spec and installer scripts: valid and consistent."""

import configparser
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app import __version__

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "io.github.fiometer.Fiometer"
DESKTOP = ROOT / "packaging" / "linux" / f"{APP_ID}.desktop"
METAINFO = ROOT / "packaging" / "linux" / f"{APP_ID}.metainfo.xml"
NSI = ROOT / "packaging" / "windows" / "fiometer.nsi"
INSTALL_FIO = ROOT / "packaging" / "windows" / "install-fio.cmd"


def validator(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (bash bootstrap.sh install adds it)")
    return path


def test_desktop_file_validates():
    out = subprocess.run([validator("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "", out.stdout + out.stderr


def test_desktop_file_validator_is_not_a_rubber_stamp(tmp_path):
    broken = tmp_path / f"{APP_ID}.desktop"
    broken.write_text(DESKTOP.read_text().replace("Type=Application\n", ""))
    out = subprocess.run([validator("desktop-file-validate"), str(broken)], capture_output=True, text=True)
    assert out.returncode != 0 and "Type" in out.stdout


def test_metainfo_validates_offline():
    out = subprocess.run(
        [validator("appstreamcli"), "validate", "--no-net", str(METAINFO)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Validation was successful" in out.stdout
    assert "W:" not in out.stdout and "E:" not in out.stdout


def test_metainfo_validator_is_not_a_rubber_stamp(tmp_path):
    broken = tmp_path / f"{APP_ID}.metainfo.xml"
    broken.write_text(re.sub(r"<summary>.*?</summary>", "", METAINFO.read_text()))
    out = subprocess.run(
        [validator("appstreamcli"), "validate", "--no-net", str(broken)], capture_output=True, text=True
    )
    assert out.returncode != 0


def test_desktop_metainfo_and_icons_agree():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(DESKTOP)
    d = entry["Desktop Entry"]
    assert d["Icon"] == APP_ID
    assert d["Exec"].split()[0] == "fiometer" and d["TryExec"] == "fiometer"
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "fiometer"
    assert root.find("releases/release").get("version") == __version__
    build = (ROOT / "packaging" / "build.sh").read_text()
    assert (
        f"app_id={APP_ID}" in build
        and f"app_id={APP_ID}" in (ROOT / "packaging/linux/install.sh").read_text()
    )
    for size in (16, 32, 48, 64, 128, 256):
        assert (ROOT / "resources" / "icons" / f"fiometer-{size}.png").is_file()


def test_resources_live_at_the_top_level_only():
    """resources/ is the design card's folder; setup.py ships it as app/resources. A folder app/resources in
    the checkout (e.g. a file a branch added there before the move) would hide it from app.paths."""
    from app.paths import resources_dir

    assert resources_dir() == ROOT / "resources"
    assert (ROOT / "resources" / "examples").is_dir() and (ROOT / "resources" / "icons").is_dir()
    stray = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "app" / "resources").rglob("*") if p.is_file())
    assert not stray, f"move these into resources/ (git mv app/resources/X resources/X): {stray}"


def test_spec_bundles_resources_and_not_fio():
    spec = (ROOT / "packaging" / "fiometer.spec").read_text()
    assert '(str(ROOT / "resources"), "resources")' in spec
    assert 'executable("fiometer-cli", console=True)' in spec
    assert "fio.exe" not in re.sub(r"#.*", "", spec)  # mentioned in comments only: never bundled
    assert 'collect_submodules("app")' in spec


def test_pyinstaller_is_pinned_in_the_package_extra():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'package = \[\s*"pyinstaller==\d+\.\d+\.\d+"', text)
    assert ".[package]" in (ROOT / "packaging" / "build.sh").read_text()
    assert ".[package]" in (ROOT / "packaging" / "build.ps1").read_text()


def makensis_on(tmp_path: Path, script: Path) -> subprocess.CompletedProcess[str]:
    """makensis (Debian's nsis, as CI builds the installer) on ``script`` with a stand-in one-folder build."""
    dist = tmp_path / "dist"
    (dist / "fiometer" / "_internal").mkdir(parents=True)
    for name in ("fiometer.exe", "fiometer-cli.exe", "_internal/base_library.zip"):
        (dist / "fiometer" / name).write_bytes(b"MZ stand-in")
    return subprocess.run(
        [validator("makensis"), "-V2", f"-DVERSION={__version__}", f"-DDIST={dist}", script.name],
        cwd=script.parent,
        capture_output=True,
        text=True,
    )


def test_nsis_script_builds_the_installer(tmp_path):
    out = makensis_on(tmp_path, NSI)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "warning" not in (out.stdout + out.stderr).lower(), out.stdout + out.stderr  # e.g. a comment's "\"
    setup = tmp_path / "dist" / f"fiometer-{__version__}-setup.exe"
    assert setup.read_bytes()[:2] == b"MZ" and setup.stat().st_size > 30_000


def test_nsis_build_is_not_a_rubber_stamp(tmp_path):
    """The icon path that once pointed where the icons used to be: makensis must refuse, not build."""
    broken = tmp_path / "windows" / NSI.name
    broken.parent.mkdir()
    for f in (NSI.parent).iterdir():
        (broken.parent / f.name).write_bytes(f.read_bytes())
    broken.write_text(NSI.read_text().replace(r"..\..\resources\icons", r"..\..\app\resources\icons"))
    out = makensis_on(tmp_path, broken)
    assert out.returncode != 0 and "fiometer.ico" in out.stdout + out.stderr


def test_nsis_script_is_per_machine_with_the_readme_entries():
    nsi = NSI.read_text(encoding="utf-8")
    assert re.search(r'!define VERSION "' + re.escape(__version__) + '"', nsi)
    assert r'File /r "${DIST}\fiometer\*.*"' in nsi
    assert "RequestExecutionLevel admin" in nsi and r'InstallDir "$PROGRAMFILES64\Fiometer"' in nsi
    # all users' Start menu, in the installer and the uninstaller alike
    for init in ("Function .onInit", "Function un.onInit"):
        body = nsi.split(init, 1)[1].split("FunctionEnd", 1)[0]
        assert "SetShellVarContext all" in body, init
    for entry in ("Fiometer", "Fiometer Command Prompt", "Install fio", "Uninstall Fiometer"):
        assert f'CreateShortcut "${{GROUP}}\\{entry}.lnk"' in nsi, entry
        assert f'Delete "${{GROUP}}\\{entry}.lnk"' in nsi, entry  # and removed again
    assert "fiometer-cli doctor" in nsi  # the Command Prompt starts with doctor: is fio found?
    assert not re.search(r"(?m)^\s*File\b.*fio\.exe", nsi)  # fio is never bundled
    cmd = INSTALL_FIO.read_bytes()
    assert b"\r\n" in cmd and b"\n" not in cmd.replace(b"\r\n", b"")  # cmd.exe's labels need CRLF
    text = cmd.decode()
    assert "winget install --exact --id fio.fio" in text and "https://github.com/axboe/fio/releases" in text


def test_build_ps1_builds_and_smoke_tests():
    ps1 = (ROOT / "packaging" / "build.ps1").read_text(encoding="utf-8")
    assert "packaging\\fiometer.spec" in ps1 or "packaging/fiometer.spec" in ps1
    assert "fiometer-cli.exe" in ps1 and "--smoke" in ps1
    assert "packaging\\windows\\fiometer.nsi" in ps1 and "makensis.exe" in ps1  # the one installer tool

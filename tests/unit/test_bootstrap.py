"""bootstrap.sh installs what the app and its tests call on a bare Debian/Ubuntu, and CI runs a fresh clone."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = (ROOT / "bootstrap.sh").read_text()
# programs the app or the tests run, by the Debian package that has them
TOOLS = {"python3": "python3", "fio": "fio", "pdftotext": "poppler-utils", "pdfinfo": "poppler-utils",
         "pdftoppm": "poppler-utils", "desktop-file-validate": "desktop-file-utils", "appstreamcli": "appstream",
         "losetup": "mount", "lsblk": "util-linux", "mkfs.ext4": "e2fsprogs", "chattr": "e2fsprogs",
         "mount": "mount", "Xvfb": "xvfb", "xauth": "xauth"}


def apt_packages() -> set[str]:
    m = re.search(r"APT_PKGS=\(([^)]*)\)", BOOTSTRAP)
    assert m, "APT_PKGS not found in bootstrap.sh"
    return set(m.group(1).split())


def test_every_tool_has_its_package_in_the_list():
    assert {"python3-venv", "fonts-dejavu-core", "libegl1", "libxcb-cursor0"} <= apt_packages()
    assert set(TOOLS.values()) <= apt_packages()


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="Debian/Ubuntu only")
@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_the_package_named_for_a_tool_really_has_it(tool):
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed here")
    owners = subprocess.run(["dpkg", "-S", str(Path(path).resolve())], capture_output=True, text=True)
    if owners.returncode != 0:  # /usr-merge: dpkg knows /bin/x or /sbin/x rather than /usr/...
        alias = Path("/" + "/".join(Path(path).resolve().parts[2:]))
        owners = subprocess.run(["dpkg", "-S", str(alias)], capture_output=True, text=True)
    if owners.returncode != 0:
        pytest.skip(f"{path} does not come from a Debian package here")
    assert TOOLS[tool] in {p.strip() for p in owners.stdout.split(":")[0].split(",")}, owners.stdout


def test_pytest_collecting_nothing_is_not_a_green_run():
    assert 'if [ "$rc" -eq 5 ]' in BOOTSTRAP and "exit 1" in BOOTSTRAP


def test_ci_tests_a_fresh_clone_with_nothing_beside_it():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "git clone" in ci and "mktemp -d" in ci and "bash bootstrap.sh test" in ci
    assert "</dev/null" in ci  # CI has no stdin; nothing may wait on it


@pytest.mark.parametrize("script", ["bootstrap.sh", ".ci/run"])
def test_the_scripts_parse(script):
    text = (ROOT / script).read_text()
    assert not re.search(r"^(<<<<<<<|=======|>>>>>>>)", text, re.M), "merge conflict markers"
    out = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr

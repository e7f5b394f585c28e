"""bootstrap.sh installs what the app and its tests call on a bare Debian/Ubuntu, and CI runs a fresh clone."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.platform_marks import posix_only

ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = (ROOT / "bootstrap.sh").read_text()
# programs the app or the tests run, by the Debian package that has them
TOOLS = {
    "python3": "python3",
    "fio": "fio",
    "pdftotext": "poppler-utils",
    "pdfinfo": "poppler-utils",
    "pdftoppm": "poppler-utils",
    "desktop-file-validate": "desktop-file-utils",
    "appstreamcli": "appstream",
    "losetup": "mount",
    "lsblk": "util-linux",
    "mkfs.ext4": "e2fsprogs",
    "chattr": "e2fsprogs",
    "mount": "mount",
    "Xvfb": "xvfb",
    "xauth": "xauth",
}


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
    owners = _owners(Path(path).resolve())
    if not owners:
        pytest.skip(f"{path} does not come from a Debian package here")
    # the named package has the program itself or depends on the one that has it: /usr/bin/python3 ->
    # python3.11 is python3.11-minimal's, which the package python3 brings (Depends: python3.11)
    assert owners & _brought_by(TOOLS[tool]), f"{path} is {sorted(owners)}'s, not brought by {TOOLS[tool]}"


def _owners(path: Path) -> set[str]:
    found = subprocess.run(["dpkg", "-S", str(path)], capture_output=True, text=True)
    if found.returncode != 0:  # /usr-merge: dpkg knows /bin/x or /sbin/x rather than /usr/...
        alias = Path("/" + "/".join(path.parts[2:]))
        found = subprocess.run(["dpkg", "-S", str(alias)], capture_output=True, text=True)
    if found.returncode != 0:
        return set()
    return {p.strip().split(":")[0] for p in found.stdout.split(": ")[0].split(",")}


def _brought_by(package: str) -> set[str]:
    """`package` and the installed packages it depends on, however deep (Depends and Pre-Depends)."""
    seen: set[str] = set()
    todo = [package]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        deps = subprocess.run(
            ["dpkg-query", "-W", "-f=${Depends},${Pre-Depends}", name], capture_output=True, text=True
        ).stdout
        for alternative in re.split(r"[,|]", deps):
            dep = alternative.strip().split(" ")[0].split(":")[0]
            if dep:
                todo.append(dep)
    return seen


def test_pytest_collecting_nothing_is_not_a_green_run():
    assert 'if [ "$rc" -eq 5 ]' in BOOTSTRAP and "exit 1" in BOOTSTRAP


def test_ci_tests_a_fresh_clone_with_nothing_beside_it():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "git clone" in ci and "mktemp -d" in ci and "bash bootstrap.sh test" in ci
    assert "</dev/null" in ci  # CI has no stdin; nothing may wait on it


@pytest.mark.parametrize("script", ["bootstrap.sh", ".ci/run", "packaging/wine/setup.sh"])
@posix_only("bash checks the shell scripts; Windows has no bash")
def test_the_scripts_parse(script):
    text = (ROOT / script).read_text()
    assert not re.search(r"^(<<<<<<<|=======|>>>>>>>)", text, re.M), "merge conflict markers"
    out = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_ci_runs_the_windows_suite_after_the_linux_one():
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index("bash bootstrap.sh test ") < ci.index("bash bootstrap.sh test-windows")
    assert "windows)" in BOOTSTRAP and "test-windows)" in BOOTSTRAP
    setup = (ROOT / "packaging" / "wine" / "setup.sh").read_text()
    assert "XDG_CACHE_HOME" in setup and ".cache}/fiometer-windows" in setup  # cached outside the clone

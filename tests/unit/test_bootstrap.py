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
# programs the app runs, by the Debian package that has them (bootstrap.sh's RUN_PKGS)
RUN_TOOLS = {
    "python3": "python3",
    "fio": "fio",
    "ssh": "openssh-client",
}
# programs only the tests run (TEST_PKGS): `bootstrap.sh run` must not install them
TEST_TOOLS = {
    "sshd": "openssh-server",
    "ip": "iproute2",
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
    "mkfs.btrfs": "btrfs-progs",
    "mkfs.xfs": "xfsprogs",
    "Xvfb": "xvfb",
    "xauth": "xauth",
    "iostat": "sysstat",
    "makensis": "nsis",
}
TOOLS = {**RUN_TOOLS, **TEST_TOOLS}


def entries(name: str) -> list[list[str]]:
    """bootstrap.sh's list ``name``: each entry as its alternatives ("a|b")."""
    m = re.search(rf"^{name}=\(([^)]*)\)", BOOTSTRAP, re.M)
    assert m, f"{name} not found in bootstrap.sh"
    return [e.strip('"').split("|") for e in m.group(1).split()]


def apt_packages(name: str = "") -> set[str]:
    lists = [name] if name else ["RUN_PKGS", "TEST_PKGS"]
    return {p for n in lists for alts in entries(n) for p in alts}


def test_every_tool_has_its_package_in_the_list():
    assert {"python3-venv", "fonts-dejavu-core", "libegl1", "libxcb-cursor0"} <= apt_packages("RUN_PKGS")
    assert set(RUN_TOOLS.values()) <= apt_packages("RUN_PKGS")
    assert set(TEST_TOOLS.values()) <= apt_packages("TEST_PKGS")


def test_running_installs_nothing_only_the_tests_need():
    """No SSH server (it would be enabled and started), X server, file-system tools, PDF tools or
    validators for a user who only runs Fiometer; pip's test extra only for testing."""
    running = apt_packages("RUN_PKGS")
    assert not running & set(TEST_TOOLS.values()), running & set(TEST_TOOLS.values())
    assert "pip install -q -e .;" in BOOTSTRAP and 'pip install -q -e ".[test]"' in BOOTSTRAP
    assert re.search(
        r'case "\$mode" in test \| install-test \| package-windows\) level=test ;; \*\) level=run', BOOTSTRAP
    )


@pytest.mark.skipif(shutil.which("apt-cache") is None, reason="Debian/Ubuntu only")
def test_every_package_name_exists_on_this_release():
    """Each entry has a name this Debian release installed or knows as a real package (Debian 13 knows
    libglib2.0-0 only as a virtual name: libglib2.0-0t64 is the package)."""
    for alts in entries("RUN_PKGS") + entries("TEST_PKGS"):
        installed = [p for p in alts if _installed(p)]
        if installed:
            continue
        known = subprocess.run(
            ["apt-cache", "show", "--no-all-versions", *alts], capture_output=True, text=True
        ).stdout
        if not re.search(r"^Package:", known, re.M) and "Package:" not in known:
            pytest.skip(f"apt knows none of {alts} here (no package lists: apt-get update)")
        assert re.search(r"^Package: (" + "|".join(map(re.escape, alts)) + ")$", known, re.M), alts


def _installed(package: str) -> bool:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${db:Status-Status}", package], capture_output=True, text=True
    )
    return out.stdout == "installed"


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


@pytest.mark.parametrize(
    "script", ["bootstrap.sh", ".ci/run", "packaging/wine/setup.sh", ".ci/debian13.sh", ".ci/fio_versions.sh"]
)
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


def test_ci_runs_debian_13_and_other_fio_versions_after_the_windows_suite():
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index("bash bootstrap.sh test-windows") < ci.index("bash .ci/debian13.sh")
    assert ci.index("bash .ci/debian13.sh") < ci.index("bash .ci/fio_versions.sh")
    trixie = (ROOT / ".ci" / "debian13.sh").read_text()
    assert "debootstrap --variant=minbase trixie" in trixie and ".cache}/fiometer-trixie" in trixie
    assert (
        "FIOMETER_SERVER_FIO=" in trixie
        and "bash bootstrap.sh run" in trixie
        and "bash bootstrap.sh test" in trixie
    )
    versions = (ROOT / ".ci" / "fio_versions.sh").read_text()
    assert "FIOMETER_SHARED" in versions and "./configure --disable-native" in versions

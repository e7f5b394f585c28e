"""An ssh:// manager whose host has no python3: Fiometer's checks cannot run there, so the host counts as a
plain fio server (issue 36.2) — and the words say so about an ssh:// manager, not about a plain server."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.integration.test_ssh_manager import pytestmark as ssh_marks
from tests.integration.test_ssh_manager import ssh_namespace  # noqa: F401 - the fixture
from tests.integration.test_ssh_target_checks import run_over_ssh

pytestmark = ssh_marks


@pytest.fixture
def no_python_there(ssh_namespace, tmp_path):  # noqa: F811
    """The ssh:// test host with a PATH of fio and the shell tools its server command needs, no python3."""
    config, ns = ssh_namespace
    bin_dir = tmp_path / "bin-without-python"
    bin_dir.mkdir()
    fio = os.environ.get("FIOMETER_SERVER_FIO") or shutil.which("fio")
    for name, found in [
        ("fio", fio),
        *((t, shutil.which(t)) for t in ("cat", "pkill", "kill", "sh", "bash", "env")),
    ]:
        if found:
            (bin_dir / name).symlink_to(found)
    sshd_config = tmp_path / "sshd_config"
    text = "".join(ln for ln in sshd_config.read_text().splitlines(True) if not ln.startswith("SetEnv PATH"))
    sshd_config.write_text(text + f"SetEnv PATH={bin_dir}\n")
    return config


def test_writes_on_an_ssh_host_without_python3_need_its_arming_and_say_why(no_python_there, tmp_path):
    target = tmp_path / "new.tst"
    done = run_over_ssh(no_python_there, tmp_path, str(target), 0)
    assert done.returncode != 0 and not target.exists(), done.stdout
    assert "manager 'M1' (ssh://fiometer-remote): Fiometer's checks could not run on that host" in done.stderr
    assert (
        "python3" in done.stderr
        and "let the checks run there (python3 3.9 or later on a Linux host)" in done.stderr
    ), done.stderr
    assert "--allow-unverified-writes 'M1'" in done.stderr
    # not the plain server's words: it is no plain server, and "reach it as ssh://" offered "ssh://ssh"
    assert "plain fio --server and" not in done.stderr and "reach it as ssh://" not in done.stderr
    for arm in ("M1", "fiometer-remote"):  # by its name, or by its host
        target.unlink(missing_ok=True)
        armed = run_over_ssh(no_python_there, tmp_path, str(target), 0, "--allow-unverified-writes", arm)
        assert armed.returncode == 0, armed.stderr
        assert "writes armed without verification" in armed.stdout and target.is_file()

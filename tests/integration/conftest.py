"""Fixtures shared by the integration tests."""

import os
import subprocess

import pytest

from tests.fio_servers import fio_servers


@pytest.fixture
def fio_server():
    """``fio_server(host, binary=None)`` starts a real `fio --server` there ($FIOMETER_SERVER_FIO or fio); all are stopped after the test."""
    yield from fio_servers()


@pytest.fixture
def small_fs(tmp_path):
    """A 4 MiB tmpfs (needs root, as CI and the developers' machines have)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True
        ).returncode
    ):
        pytest.skip("mounting a small tmpfs needs root")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)

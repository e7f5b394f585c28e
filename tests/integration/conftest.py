"""Fixtures shared by the integration tests."""

import pytest

from tests.fio_servers import fio_servers


@pytest.fixture
def fio_server():
    """``fio_server(host, binary="fio")`` starts a real `fio --server` there; all are stopped after the test."""
    yield from fio_servers()

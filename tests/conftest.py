"""Suite-wide: no test reads or writes the developer's own Fiometer settings file or log."""

import pytest

from app import diagnostics
from app.user_settings import ENV_DIR


@pytest.fixture(autouse=True)
def _private_settings_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(ENV_DIR, str(tmp_path_factory.mktemp("settings")))
    monkeypatch.setenv(diagnostics.ENV_DIR, str(tmp_path_factory.mktemp("log")))

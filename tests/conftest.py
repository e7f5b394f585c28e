"""Suite-wide: no test reads or writes the developer's own Fiometer settings file or results database."""

import pytest

from app.store.paths import ENV_OVERRIDE as ENV_DB
from app.user_settings import ENV_DIR


@pytest.fixture(autouse=True)
def _private_settings_and_database(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(ENV_DIR, str(tmp_path_factory.mktemp("settings")))
    monkeypatch.setenv(ENV_DB, str(tmp_path_factory.mktemp("data") / "fiometer.db"))

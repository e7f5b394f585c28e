"""Suite-wide: no test reads or writes the developer's own Fiometer settings file or results database."""

import pytest

from app.user_settings import ENV_DIR


@pytest.fixture(autouse=True)
def _private_settings_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(ENV_DIR, str(tmp_path_factory.mktemp("settings")))
    # ... nor the developer's results database (a newer Fiometer's database would fail the test, and runs
    # made by tests do not belong there); tests that need the default location unset this
    monkeypatch.setenv("FIOMETER_DB", str(tmp_path_factory.mktemp("results") / "fiometer.db"))

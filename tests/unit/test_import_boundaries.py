"""The Qt-free layers import with Qt absent (docs/design.md: nothing below app.ui imports Qt)."""

from tests.helpers import assert_imports_without_qt

QT_FREE = [
    "icf_import",
    "app.model",
    "app.model.metrics",
    "app.model.opening",
    "app.model.examples",
    "app.engine",
    "app.engine.transports.transport",
    "app.engine.transports.fio_binary",
    "app.engine.transports.fio_json_stream",
    "app.engine.transports.fio_messages",
    "app.engine.transports.local_fio",
    "app.engine.sampling.telemetry",
    "app.engine.run.runner",
    "app.engine.run.managers",
    "app.engine.transports.fioproto",
    "app.engine.guards.safety",
    "app.engine.jobs.placement",
    "app.engine.devices.linux_devices",
    "app.engine.jobs.windows_paths",
    "app.store",
    "app.session.recording",
    "app.session.run_session",
    "app.session.run_apart",
    "app.session.run_apart_child",
    "app.live.data",
    "app.analysis.export_run",
    "app.analysis.compare",
    "app.cli.progress",
    "app.cli.common",
    "app.cli.run_commands",
    "app.cli.results_commands",
    "app.cli.plan_commands",
    "app.analysis.validity",
    "app.analysis.curve",
    "app.engine.run.curve_search",
    "app.engine.run.curve_runner",
    "app.store.run_extras",
    "app.cli.curve_commands",
]


def test_qt_free_layers_import_without_qt():
    assert_imports_without_qt(QT_FREE)

"""The History GUI's data side imports with Qt absent: the store query it adds, and what it reads and
writes on store task threads (the Qt-free rule of docs/design.md, for the parts that need no widgets)."""

from tests.helpers import assert_imports_without_qt


def test_history_data_side_imports_without_qt():
    assert_imports_without_qt(
        [
            "app.store.overview",
            "app.ui.history.stored_series",
            "app.ui.history.compare_data",
            "app.ui.history.report_files",
        ]
    )

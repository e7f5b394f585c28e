"""History: every stored run, filtered by text, tag and status; rename, tag, annotate, delete; open,
compare and report. Store work runs on a background thread (``StoreTasks``); the list never blocks.

The window that holds the tab is its ``UserDesk``: ``ask``, ``show_problem`` (looked up when needed: tests
replace them) and a status bar.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.store import Store, StoreError, delete_run, resolve_db_path
from app.ui.confirm import unsaved_answer, unsaved_box
from app.ui.history.history_model import (
    COLUMNS,
    RUN_ID_ROLE,
    SORT_ROLE,
    STATUSES,
    HistoryModel,
    HistoryRow,
    Listing,
    fetch_listing,
    local_time,
)
from app.ui.history.run_editor import RunEdit, RunEditor
from app.ui.history.store_tasks import StoreTasks
from app.ui.user_desk import UserDesk
from app.ui.widgets import EmptyState, button

EMPTY_TEXT = (
    "No runs yet \u2014 press Start, or import old Iometer results (File > Import Iometer results\u2026)"
)
FILTER_DELAY_MS = 200
# starting widths in characters of sample text; the rest goes to Notes (the last column stretches)
COLUMN_SAMPLES = {
    "Run": "9999",
    "Started": "2026-03-13 16:30",
    "Name": "EVA 4400 36 disks Vraid1",
    "Plan": "VMware unoffic",
    "Description": "36 HDDs in one disk",
    "Managers / hosts": "M1 on lab-ws01",
    "Load": "QD 16\u2013256, 12 workers",
    "Steps": "Steps",
    "Status": "interrupted",
    "Tags": "before, client-x",
    "Notes": "Notes",
}


def deletion_text(rows: list[HistoryRow]) -> str:
    """What a deletion removes, run by run, in words (the question asked before deleting)."""
    lines = []
    for row in rows:
        r = row.run
        tags = f", tags {', '.join(r.tags)}" if r.tags else ""
        lines.append(
            f"\u2022 {row.label()} ({r.status}, {r.step_count} step{'s' * (r.step_count != 1)}, "
            f"started {local_time(r.started)}{tags})"
        )
    what = "this run" if len(rows) == 1 else f"these {len(rows)} runs"
    return (
        f"Delete {what} from the results database?\n\n"
        + "\n".join(lines)
        + "\n\nAll their samples, results, fio job files and fio output are deleted with them. "
        "This cannot be undone."
    )


class _EmptyPage(QWidget):
    """No runs yet (with the import action), or the database cannot be read (with Retry)."""

    def __init__(self, import_action: Any, retry: Any):
        super().__init__()
        self.message = EmptyState(EMPTY_TEXT)
        self.message.setSizePolicy(
            self.message.sizePolicy().horizontalPolicy(), self.message.sizePolicy().Policy.Preferred
        )
        self.import_button = button(
            "Import Iometer results\u2026",
            "Store the runs of an Iometer results.csv in the history",
            import_action,
        )
        self.retry_button = button("Try again", "Read the results database again", retry)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.import_button)
        row.addWidget(self.retry_button)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addStretch(1)
        lay.addWidget(self.message)
        lay.addLayout(row)
        lay.addStretch(2)

    def show_empty(self) -> None:
        self.message.setText(EMPTY_TEXT)
        self.import_button.show()
        self.retry_button.hide()

    def show_error(self, text: str) -> None:
        self.message.setText(f"The results database cannot be read.\n\n{text}")
        self.import_button.hide()
        self.retry_button.show()


class HistoryTab(QWidget):
    open_run = Signal(int)
    compare_runs = Signal(list)  # run ids, oldest first
    report_runs = Signal(list)  # run ids, oldest first
    import_requested = Signal()
    runs_deleted = Signal(list)  # run ids
    loaded = Signal()  # the list shows the store's current state (tests wait for it)

    def __init__(self, desk: UserDesk, tasks: StoreTasks, parent: QWidget | None = None):
        super().__init__(parent)
        self.desk = desk
        self.tasks = tasks
        self.listing: Listing | None = None
        self._actions: dict[QPushButton, QAction] = {}
        self.error: str | None = None
        self._want_select: list[int] | None = None
        self._loads = 0  # requests in flight; only the last one's answer is shown

        # filter bar
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter by name, description, plan or notes")
        self.search.setClearButtonEnabled(True)
        self.tag_filter = QComboBox()
        self.tag_filter.setToolTip("Only runs with this tag")
        self.tag_filter.setMinimumContentsLength(10)
        self.status_filter = QComboBox()
        self.status_filter.addItem("Any status", "")
        for s in STATUSES:
            self.status_filter.addItem(s, s)
        self.status_filter.setToolTip("Only runs that ended this way")
        self.count = QLabel()
        self.clear_filter = button("Clear filter", "Show every stored run", self.clear_filters)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Filter:"))
        bar.addWidget(self.search, 3)
        bar.addWidget(QLabel("Tag:"))
        bar.addWidget(self.tag_filter, 1)
        bar.addWidget(QLabel("Status:"))
        bar.addWidget(self.status_filter)
        bar.addWidget(self.clear_filter)
        bar.addWidget(self.count)

        # actions
        self.open_button = button(
            "Open", "Show the selected run's charts and results (double-click)", self._open_selected
        )
        self.compare_button = button(
            "Compare\u2026",
            "Compare the selected runs: the oldest is the baseline (you can change it in the comparison)",
            self._compare_selected,
        )
        self.report_button = button(
            "Report\u2026",
            "Write a report (HTML, PDF, XLSX, CSV) of the selected runs",
            self._report_selected,
        )
        self.delete_button = button(
            "Delete\u2026",
            "Delete the selected runs from the results database (asks first)",
            self.delete_selected,
        )
        self.import_button = button(
            "Import Iometer results\u2026",
            "Store the runs of an Iometer results.csv in the history",
            self.import_requested.emit,
        )
        self.refresh_button = button("Refresh", "Read the results database again", self.refresh)
        actions = QHBoxLayout()
        for b in (self.open_button, self.compare_button, self.report_button, self.delete_button):
            actions.addWidget(b)
        actions.addStretch(1)
        actions.addWidget(self.import_button)
        actions.addWidget(self.refresh_button)

        # list
        self.model = HistoryModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(COLUMNS.index("Started"), Qt.SortOrder.DescendingOrder)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        fm = self.view.fontMetrics()
        bold = QFont(header.font())
        bold.setBold(True)  # some styles draw headers bold
        hfm = QFontMetrics(bold)
        for i, c in enumerate(COLUMNS):
            arrow = 18 if c == "Started" else 0  # the sort indicator
            self.view.setColumnWidth(
                i, max(fm.horizontalAdvance(COLUMN_SAMPLES[c]), hfm.horizontalAdvance(c) + arrow) + 12
            )
        self.view.doubleClicked.connect(lambda _i: self._open_selected())
        # the buttons' actions on the list itself: a context menu, Enter to open, Delete to delete
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for text, slot, key, b in (
            ("Open", self._open_selected, QKeySequence(Qt.Key.Key_Return), self.open_button),
            ("Compare\u2026", self._compare_selected, None, self.compare_button),
            ("Report\u2026", self._report_selected, None, self.report_button),
            ("Delete\u2026", self.delete_selected, QKeySequence.StandardKey.Delete, self.delete_button),
        ):
            act = QAction(text, self.view)
            if key is not None:
                act.setShortcut(key)
                act.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            act.triggered.connect(lambda _c=False, s=slot: s())
            self.view.addAction(act)
            self._actions[b] = act
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())

        self.editor = RunEditor()
        self.editor.save_requested.connect(self.save_edit)

        list_page = QWidget()
        llay = QVBoxLayout(list_page)
        llay.setContentsMargins(0, 0, 0, 0)
        llay.addLayout(bar)
        llay.addWidget(self.view, 1)
        llay.addLayout(actions)
        self.empty = _EmptyPage(self.import_requested.emit, self.refresh)
        self.pages = QStackedWidget()
        self.pages.addWidget(list_page)
        self.pages.addWidget(self.empty)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.pages)
        self.splitter.addWidget(self.editor)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([520, 200])
        lay = QVBoxLayout(self)
        lay.addWidget(self.splitter)

        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _t: self._filter_timer.start())
        self.tag_filter.currentIndexChanged.connect(lambda _i: self._filters_changed())
        self.status_filter.currentIndexChanged.connect(lambda _i: self._filters_changed())
        self._fill_tags([])
        self._selection_changed()

    # --- loading ------------------------------------------------------------------------------
    @property
    def filtered(self) -> bool:
        return bool(
            self.search.text().strip() or self.tag_filter.currentData() or self.status_filter.currentData()
        )

    def _filters_changed(self) -> None:
        if not self._filling_tags:
            self.refresh()

    def clear_filters(self, select: list[int] | None = None) -> None:
        for w in (self.search, self.tag_filter, self.status_filter):
            w.blockSignals(True)
        self.search.clear()
        self.tag_filter.setCurrentIndex(0)
        self.status_filter.setCurrentIndex(0)
        for w in (self.search, self.tag_filter, self.status_filter):
            w.blockSignals(False)
        self.refresh(select)

    def refresh(self, select: list[int] | None = None) -> None:
        """Read the list again (in the background); ``select`` these run ids when it arrives."""
        self._filter_timer.stop()
        if select is not None:
            self._want_select = select
        text, tag, status = (
            self.search.text().strip(),
            self.tag_filter.currentData() or "",
            self.status_filter.currentData() or "",
        )
        if not resolve_db_path(self.tasks.db_path).exists():  # nothing stored yet: do not create the file
            self._loads += 1
            self._loaded(Listing([], 0, []))
            return
        self._loads += 1
        self.tasks.submit(
            "listing the stored runs",
            lambda store: fetch_listing(store, text, tag, status),
            self._loaded,
            self._load_failed,
            owner=self,
        )

    def _loaded(self, listing: Listing) -> None:
        self._loads -= 1
        if self._loads:
            return  # a newer request is on its way
        keep = self._want_select if self._want_select is not None else self.selected_ids()
        self._want_select = None
        current = self.current_id()
        self.listing, self.error = listing, None
        self._fill_tags(listing.tags)
        self.model.set_rows(listing.rows)
        self.pages.setCurrentIndex(1 if listing.total == 0 else 0)
        if listing.total == 0:
            self.empty.show_empty()
        n = len(listing.rows)
        self.count.setText(
            f"{n} of {listing.total} runs"
            if self.filtered
            else f"{listing.total} run{'s' * (listing.total != 1)}"
        )
        self.clear_filter.setVisible(self.filtered)
        self._select(keep, current)
        self._selection_changed()
        self.loaded.emit()

    def _load_failed(self, message: str) -> None:
        self._loads -= 1
        if self._loads:
            return
        self.error = message
        self.listing = None
        self.model.set_rows([])
        self.empty.show_error(message)
        self.pages.setCurrentIndex(1)
        self._selection_changed()
        self.loaded.emit()

    _filling_tags = False

    def _fill_tags(self, tags: list[str]) -> None:
        current = self.tag_filter.currentData() or ""
        self._filling_tags = True
        self.tag_filter.clear()
        self.tag_filter.addItem("Any tag", "")
        for t in tags:
            self.tag_filter.addItem(t, t)
        if current and current not in tags:
            self.tag_filter.addItem(current, current)  # keep the user's filter even if no run has it now
        self.tag_filter.setCurrentIndex(max(0, self.tag_filter.findData(current)))
        self._filling_tags = False

    # --- selection ----------------------------------------------------------------------------
    def _rows_by_id(self) -> dict[int, HistoryRow]:
        return {r.id: r for r in self.model.rows}

    def selected_ids(self) -> list[int]:
        """Selected run ids in the order shown."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [self.proxy.index(r, 0).data(RUN_ID_ROLE) for r in rows]

    def selected_rows(self) -> list[HistoryRow]:
        by_id = self._rows_by_id()
        return [by_id[i] for i in self.selected_ids() if i in by_id]

    def current_id(self) -> int | None:
        idx = self.view.currentIndex()
        return idx.data(RUN_ID_ROLE) if idx.isValid() else None

    def select_runs(self, ids: list[int]) -> None:
        self._select(ids, ids[0] if ids else None)
        self._selection_changed()

    def _select(self, ids: list[int], current: int | None) -> None:
        sm = self.view.selectionModel()
        sm.clearSelection()
        wanted = set(ids)
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for r in range(self.proxy.rowCount()):
            idx = self.proxy.index(r, 0)
            rid = idx.data(RUN_ID_ROLE)
            if rid in wanted:
                sm.select(idx, flags)
            if rid == current:
                sm.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.NoUpdate)

    def _oldest_first(self, rows: list[HistoryRow]) -> list[int]:
        return [r.id for r in sorted(rows, key=lambda r: (r.run.started, r.id))]

    def _selection_changed(self) -> None:
        rows = self.selected_rows()
        n = len(rows)
        for b, on in (
            (self.open_button, n == 1),
            (self.compare_button, n >= 2),
            (self.report_button, n >= 1),
            (self.delete_button, n >= 1),
        ):
            b.setEnabled(on)
            if b in self._actions:
                self._actions[b].setEnabled(on)
        editing = self.editor.row
        if (
            n == 1
            and editing is not None
            and editing.id == rows[0].id
            and self.editor.save_button.isEnabled()
        ):
            return  # keep unsaved edits while the list refreshes
        edit = self.editor.pending()
        if (
            editing is not None
            and edit is not None
            and not edit.empty
            and self.editor.save_button.isEnabled()
        ):
            answer = self.unsaved_edit_question(editing.label())
            if answer == "cancel":  # back to the run being edited, edits kept
                self.view.selectionModel().blockSignals(True)
                self._select([editing.id], editing.id)
                self.view.selectionModel().blockSignals(False)
                return
            if answer == "save":  # and then the run clicked, not the one saved
                self.save_edit(edit, select=[r.id for r in rows])
        self.editor.show_row(rows[0] if n == 1 else None, n)

    def unsaved_edit_question(self, label: str) -> str:
        """'save' | 'discard' | 'cancel' for a run's unsaved name/tags/notes (Save is the default)."""
        return unsaved_answer(unsaved_box(self, "Unsaved run details", f"Save the changes to {label}?"))

    def _open_selected(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.open_run.emit(ids[0])

    def _compare_selected(self) -> None:
        rows = self.selected_rows()
        if len(rows) >= 2:
            self.compare_runs.emit(self._oldest_first(rows))

    def _report_selected(self) -> None:
        rows = self.selected_rows()
        if rows:
            self.report_runs.emit(self._oldest_first(rows))

    # --- edits --------------------------------------------------------------------------------
    def save_edit(self, edit: RunEdit, select: list[int] | None = None) -> None:
        """Store the edit; then the list shows ``select`` selected (the run saved by default)."""
        self.editor.save_button.setEnabled(False)

        def saved(_result: object) -> None:
            self.desk.statusBar().showMessage(f"Run {edit.run_id} saved", 5000)
            self.editor.row = None  # show the stored values once the list arrives
            self.refresh(select=select or [edit.run_id])

        self.tasks.submit(
            f"saving run {edit.run_id}",
            edit.apply,
            saved,
            lambda msg: self._edit_failed("Cannot save the run", msg),
            owner=self,
        )

    def _edit_failed(self, title: str, message: str) -> None:
        self.desk.show_problem(title, message)
        self.editor.row = None
        self.refresh()

    def delete_selected(self) -> None:
        rows = self.selected_rows()
        if not rows:
            return
        title = "Delete run" if len(rows) == 1 else f"Delete {len(rows)} runs"
        if not self.desk.ask(title, deletion_text(rows)):
            return
        ids = [r.id for r in rows]

        def work(store: Store) -> tuple[list[int], list[str]]:
            done, problems = [], []
            for i in ids:
                try:
                    delete_run(store, i)
                    done.append(i)
                except StoreError as e:  # still recording, or deleted meanwhile: say so, delete the others
                    problems.append(str(e))
            return done, problems

        def deleted(result: tuple[list[int], list[str]]) -> None:
            done, problems = result
            if done:
                self.desk.statusBar().showMessage(
                    f"Deleted run{'s' * (len(done) != 1)} {', '.join(map(str, done))}", 8000
                )
                self.runs_deleted.emit(done)
            if problems:
                self.desk.show_problem("Cannot delete", "\n".join(problems))
            self.refresh()

        self.tasks.submit(
            "deleting runs", work, deleted, lambda msg: self._edit_failed("Cannot delete", msg), owner=self
        )

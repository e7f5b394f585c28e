"""A report table (app.report.tables.Table) shown in a QTableWidget: the same cells, text and better/worse
marks the HTML and PDF reports show, so the window and the report never disagree.

Group rows (a comparison table's metric) become full-width heading rows. Marked cells keep their mark in
``MARK_ROLE`` and are coloured like the HTML report (green better, red worse); changes within noise carry
no mark and keep the normal colours. Ctrl+C copies the selected cells as tab-separated text.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.report.tables import Table

MARK_ROLE = Qt.ItemDataRole.UserRole + 1  # "better" | "worse" | None
VALUE_ROLE = Qt.ItemDataRole.UserRole + 2  # the raw value (number, text or None)
GROUP_ROLE = Qt.ItemDataRole.UserRole + 3  # True on a group heading row
# the HTML report's colours (app/report/html.py): dark text on a light tint reads in light and dark themes
MARK_COLORS = {
    "better": (QColor("#17693a"), QColor("#e6f4ea")),
    "worse": (QColor("#a8231b"), QColor("#fbe9e7")),
}
ACCENT = QColor("#1f5fa8")


class ReportTableWidget(QTableWidget):
    """Shows one report Table; ``fit`` sizes the widget to all its rows (tables stacked in a scroll area)."""

    def __init__(self, table: Table | None = None, fit: bool = True, parent: QWidget | None = None):
        super().__init__(parent)
        self.fit = fit
        self.source: Table | None = None
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.setWordWrap(False)
        self.setAlternatingRowColors(False)
        self.horizontalHeader().setDefaultAlignment(
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        )
        if fit:
            self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        if table is not None:
            self.set_table(table)

    def set_table(self, table: Table) -> None:
        self.source = table
        self.clear()
        grouped = any(r.group for r in table.rows)
        rows: list[tuple[str, object]] = []  # ("group", title) | ("row", Row)
        group = None
        for r in table.rows:
            if grouped and r.group != group:
                group = r.group
                rows.append(("group", group))
            rows.append(("row", r))
        self.setColumnCount(len(table.columns))
        self.setRowCount(len(rows))
        header_items = []
        for c, col in enumerate(table.columns):
            it = QTableWidgetItem(col.title)
            align = Qt.AlignmentFlag.AlignRight if col.numeric else Qt.AlignmentFlag.AlignLeft
            it.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
            header_items.append(it)
            self.setHorizontalHeaderItem(c, it)
        bold = QFont(self.font())
        bold.setBold(True)
        for i, (kind, what) in enumerate(rows):
            if kind == "group":
                it = QTableWidgetItem(str(what))
                it.setFont(bold)
                it.setForeground(QBrush(ACCENT))
                it.setData(GROUP_ROLE, True)
                it.setFlags(Qt.ItemFlag.ItemIsEnabled)
                self.setItem(i, 0, it)
                self.setSpan(i, 0, 1, len(table.columns))
                continue
            for c, cell in enumerate(what.cells):  # type: ignore[attr-defined]
                it = QTableWidgetItem(cell.text)
                numeric = table.columns[c].numeric
                it.setTextAlignment(
                    (Qt.AlignmentFlag.AlignRight if numeric else Qt.AlignmentFlag.AlignLeft)
                    | Qt.AlignmentFlag.AlignVCenter
                )
                it.setData(VALUE_ROLE, cell.value)
                it.setData(MARK_ROLE, cell.mark)
                if len(cell.text) > 40:  # e.g. why a step is not compared: readable when the column is cut
                    it.setToolTip(cell.text)
                if cell.mark in MARK_COLORS:
                    fg, bg = MARK_COLORS[cell.mark]
                    it.setForeground(QBrush(fg))
                    it.setBackground(QBrush(bg))
                    it.setFont(bold)
                self.setItem(i, c, it)
        self.resizeColumnsToContents()
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for c in range(self.columnCount()):  # room for the bold marked text and a little air
            self.setColumnWidth(c, self.columnWidth(c) + 12)
        header.setStretchLastSection(False)
        if self.fit:
            self._fit_height()

    def _fit_height(self) -> None:
        """As tall as its rows and no wider than its columns (no empty header band to the right)."""
        self.setMaximumWidth(self.horizontalHeader().length() + 2 * self.frameWidth() + 2)
        h = self.horizontalHeader().height() + 2 * self.frameWidth()
        h += sum(self.rowHeight(r) for r in range(self.rowCount()))
        if (
            self.horizontalScrollBar().isVisible()
            or self.horizontalHeader().length() > self.viewport().width()
        ):
            h += self.horizontalScrollBar().sizeHint().height()
        self.setFixedHeight(h + 2)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if self.fit and self.source is not None:
            self._fit_height()

    def row_texts(self) -> list[list[str]]:
        """Every row's cell texts (a heading row is one cell): what the user sees, for tests and copying."""
        out = []
        for r in range(self.rowCount()):
            if self.item(r, 0) is not None and self.item(r, 0).data(GROUP_ROLE):
                out.append([self.item(r, 0).text()])
            else:
                out.append(
                    [self.item(r, c).text() if self.item(r, c) else "" for c in range(self.columnCount())]
                )
        return out

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            return
        super().keyPressEvent(event)

    def copy_selection(self) -> None:
        ranges = self.selectedRanges()
        if not ranges:
            return
        r = ranges[0]
        lines = []
        if r.topRow() == 0 and r.bottomRow() == self.rowCount() - 1:  # the whole table: with its header
            lines.append(
                "\t".join(
                    self.horizontalHeaderItem(c).text() for c in range(r.leftColumn(), r.rightColumn() + 1)
                )
            )
        for row in range(r.topRow(), r.bottomRow() + 1):
            lines.append(
                "\t".join(
                    self.item(row, c).text() if self.item(row, c) else ""
                    for c in range(r.leftColumn(), r.rightColumn() + 1)
                )
            )
        QApplication.clipboard().setText("\n".join(lines))


class TableSection(QWidget):
    """A report table under its title, with its notes below."""

    def __init__(self, table: Table, parent: QWidget | None = None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 6, 0, 6)
        self.title = QLabel(table.title)
        f = self.title.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.1)
        self.title.setFont(f)
        self.title.setWordWrap(True)
        lay.addWidget(self.title)
        self.table = ReportTableWidget(table)
        lay.addWidget(self.table)
        self.notes = QLabel("\n".join(table.notes))
        self.notes.setWordWrap(True)
        self.notes.setEnabled(False)  # muted
        self.notes.setVisible(bool(table.notes))
        lay.addWidget(self.notes)

"""The History list: stored runs as table rows (read on a background thread, shown by a Qt model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from app.store import RunSummary, Store, list_runs
from app.store.overview import run_places

STATUSES = ("complete", "stopped", "interrupted", "failed", "running")
STATUS_TIPS = {
    "complete": "Every step ran to its end.",
    "stopped": "Stopped by the user; the steps that finished have their final numbers.",
    "interrupted": "The recording program ended without finishing the run (killed, crashed, power cut); "
                   "what was recorded up to then is kept.",
    "failed": "fio or a manager failed; open the run to see its messages.",
    "running": "Being recorded now (by this or another Fiometer).",
}
STATUS_COLORS = {"failed": "#c62828", "interrupted": "#b26a00", "running": "#1f5fa8"}
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 10
SORT_ROLE = Qt.ItemDataRole.UserRole + 11
COLUMNS = ("Run", "Started", "Name", "Plan", "Description", "Managers / hosts", "Steps", "Status", "Tags",
           "Notes")


def local_time(iso: str | None, seconds: bool = False) -> str:
    """A stored UTC timestamp in this computer's time zone, e.g. 2026-11-21 16:06."""
    if not iso:
        return ""
    try:
        t = datetime.fromisoformat(iso).astimezone()
    except ValueError:
        return iso[:19].replace("T", " ")
    return t.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def places_text(places: list[tuple[str, str]]) -> str:
    """'local on lab1', 'DB01 on db01:8765, WEB01 on web01:8765'; a name alone where it is also the host."""
    return ", ".join(name if name == where else f"{name} on {where}" for name, where in places)


@dataclass
class HistoryRow:
    run: RunSummary
    places: list[tuple[str, str]] = field(default_factory=list)

    @property
    def id(self) -> int:
        return self.run.id

    def label(self) -> str:
        return f"Run {self.run.id}" + (f" \u201c{self.run.name}\u201d" if self.run.name else "")


@dataclass
class Listing:
    rows: list[HistoryRow]  # the runs the filter lets through, newest first
    total: int  # runs in the store
    tags: list[str]  # every tag in the store (for the tag filter)


def fetch_listing(store: Store, text: str = "", tag: str = "", status: str = "") -> Listing:
    """Runs as `fiometer runs` lists them, with the same filters (text: name, description, plan, notes)."""
    everything = list_runs(store)
    shown = list_runs(store, text=text or None, tag=tag or None, status=status or None) \
        if (text or tag or status) else everything
    places = run_places(store)
    tags = sorted({t for r in everything for t in r.tags}, key=str.casefold)
    return Listing([HistoryRow(r, places.get(r.id, [])) for r in shown], len(everything), tags)


def _one_line(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


class HistoryModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[HistoryRow] = []

    def set_rows(self, rows: list[HistoryRow]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == 1:
            return "When the run started, in this computer's time zone"
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        r = row.run
        col = COLUMNS[index.column()]
        if role == RUN_ID_ROLE:
            return r.id
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, col)
        if role == SORT_ROLE:
            return {"Run": r.id, "Started": r.started, "Steps": r.step_count}.get(col, self._text(row, col).casefold())
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == "Status":
                return STATUS_TIPS.get(r.status, r.status)
            if col in ("Description", "Notes", "Managers / hosts", "Name", "Plan") and self._text(row, col):
                full = {"Description": r.description, "Notes": r.notes}.get(col, self._text(row, col))
                return full
            if col == "Started":
                return f"{local_time(r.started, True)} (ended {local_time(r.ended, True) or 'not yet'})"
            return None
        if role == Qt.ItemDataRole.ForegroundRole and col == "Status" and r.status in STATUS_COLORS:
            return QBrush(QColor(STATUS_COLORS[r.status]))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in ("Run", "Steps"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def _text(row: HistoryRow, col: str) -> str:
        r = row.run
        return {
            "Run": str(r.id),
            "Started": local_time(r.started),
            "Name": r.name,
            "Plan": r.plan_name,
            "Description": _one_line(r.description),
            "Managers / hosts": places_text(row.places),
            "Steps": str(r.step_count),
            "Status": r.status,
            "Tags": ", ".join(r.tags),
            "Notes": _one_line(r.notes),
        }[col]

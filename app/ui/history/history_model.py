"""The History list: stored runs as table rows (read on a background thread, shown by a Qt model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from app.store import RunListing, Store, list_runs
from app.store.overview import RunLoad, run_loads, run_places

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
COLUMNS = (
    "Run",
    "Started",
    "Name",
    "Plan",
    "Description",
    "Managers / hosts",
    "Load",
    "Steps",
    "Status",
    "Tags",
    "Notes",
)
LOAD_TIP = (
    "The queue depth (outstanding I/Os per target) and the number of active workers over the run's steps"
)


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


def _span(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}\u2013{hi}"


def load_text(load: RunLoad | None) -> str:
    """'QD 8\u201364, 1 worker', 'QD 1, 2\u20134 workers'; '' for a run without steps."""
    if load is None:
        return ""
    parts = [] if load.qd_min is None or load.qd_max is None else [f"QD {_span(load.qd_min, load.qd_max)}"]
    if load.workers_max:
        parts.append(
            f"{_span(load.workers_min, load.workers_max)} worker{'' if load.workers_max == 1 else 's'}"
        )
    return ", ".join(parts)


@dataclass
class HistoryRow:
    run: RunListing
    places: list[tuple[str, str]] = field(default_factory=list)
    load: RunLoad | None = None

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
    shown = (
        list_runs(store, text=text or None, tag=tag or None, status=status or None)
        if (text or tag or status)
        else everything
    )
    places = run_places(store)
    loads = run_loads(store)
    tags = sorted({t for r in everything for t in r.tags}, key=str.casefold)
    return Listing(
        [HistoryRow(r, places.get(r.id, []), loads.get(r.id)) for r in shown], len(everything), tags
    )


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

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,  # noqa: N802
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return {"Started": "When the run started, in this computer's time zone", "Load": LOAD_TIP}.get(
                COLUMNS[section]
            )
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
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
            if col == "Load":  # deepest queue first, then shallowest, then workers (one int: Qt compares it)
                ld = row.load
                return (
                    -1
                    if ld is None
                    else ((ld.qd_max or 0) * 100_000 + (ld.qd_min or 0)) * 10_000 + ld.workers_max
                )
            return {"Run": r.id, "Started": r.started, "Steps": r.step_count}.get(
                col, self._text(row, col).casefold()
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == "Status":
                return STATUS_TIPS.get(r.status, r.status)
            if col in ("Description", "Notes", "Managers / hosts", "Name", "Plan") and self._text(row, col):
                full = {"Description": r.description, "Notes": r.notes}.get(col, self._text(row, col))
                return full
            if col == "Load" and self._text(row, col):
                return LOAD_TIP
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
            "Load": load_text(row.load),
            "Steps": str(r.step_count),
            "Status": r.status,
            "Tags": ", ".join(r.tags),
            "Notes": _one_line(r.notes),
        }[col]

"""The Results Display's disk table: iostat's figures per manager and disk, live (from LiveDisks)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from app.live.disks import DiskRow, LiveDisks
from app.model.disk_metrics import DiskCounts
from app.ui.widgets import compact_rows

ESTIMATED_TIP = (
    "Estimated: a local fio reports its disk utilisation only as a percentage since the step began, "
    "so this window's is worked out from it and the report times (a fio server sends the disk's own "
    "clock, and its figures are exact)"
)


def _fmt(v: float | None, digits: int = 2) -> str:
    if v is None or v != v:
        return "—"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.{digits}f}"


# (header, tooltip, value)
COLUMNS: tuple[tuple[str, str, Callable[[DiskCounts], float | None]], ...] = (
    (
        "%util",
        "Share of the window the disk was busy with at least one request (iostat's %util)",
        lambda c: c.util_pct,
    ),
    ("aqu-sz", "Average number of requests in the disk's queue (iostat's aqu-sz)", lambda c: c.aqu_sz),
    (
        "await (ms)",
        "Average time a request took at the disk, queueing included (iostat's await)",
        lambda c: c.await_ms,
    ),
    (
        "r/s",
        "Reads the disk completed per second (after merging: the device's IOPS, not fio's)",
        lambda c: c.read_iops,
    ),
    (
        "w/s",
        "Writes the disk completed per second (after merging: the device's IOPS, not fio's)",
        lambda c: c.write_iops,
    ),
)
FIXED = ("Manager", "Disk")  # then the figures, then the targets (the one column that stretches)
TARGETS = len(FIXED) + len(COLUMNS)  # the column of the targets on the disk


class DiskTable(QTableWidget):
    """One row per manager and disk in the scope shown; '—' with the reason where fio reports no disks."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(FIXED) + len(COLUMNS) + 1, parent)
        compact_rows(self)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.verticalHeader().setVisible(False)
        self.setHorizontalHeaderLabels([*FIXED, *(c[0] for c in COLUMNS), "Targets"])
        for i, (_name, tip, _get) in enumerate(COLUMNS):
            self.horizontalHeaderItem(len(FIXED) + i).setToolTip(tip)
        self.horizontalHeaderItem(TARGETS).setToolTip(
            "The targets on the disk, where Fiometer can tell (managers on "
            "this machine); fio names the disks only"
        )
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TARGETS, QHeaderView.ResizeMode.Stretch)
        self.setToolTip(
            "Disk statistics from fio's per-disk counters, as iostat computes them, for the level shown"
        )

    def show_rows(self, rows: list[DiskRow], kind: str) -> None:
        """Fill the table (rows of the scope shown, numbers of ``kind``: WHOLE_TEST or LAST_UPDATE)."""
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            counts = row.latest.get(kind)
            targets = ", ".join(dict.fromkeys(name for _w, name in row.targets))
            tip = row.reason or (ESTIMATED_TIP if row.estimated else "")
            cells = [row.manager, row.disk or "—"]
            cells += [_fmt(get(counts)) if counts is not None else "—" for _h, _t, get in COLUMNS]
            cells.append(targets or ("—" if row.reason else ""))
            for c, text in enumerate(cells):
                it = self.item(r, c)
                if it is None:
                    it = QTableWidgetItem()
                    if len(FIXED) <= c < TARGETS:
                        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.setItem(r, c, it)
                it.setText(text)
                it.setToolTip(tip if (row.reason or c == len(FIXED)) else "")

    @staticmethod
    def rows_for(disks: LiveDisks, keys: list[tuple[str, str | None, str]]) -> list[DiskRow]:
        """The rows of a Results Display scope (its series keys: ALL, managers or workers)."""
        if any(k[0] == "all" for k in keys):
            return disks.for_scope(None)
        out: list[DiskRow] = []
        for level, mgr, key in keys:
            for row in disks.for_scope({mgr}) if level == "manager" else disks.for_scope(None, (mgr, key)):
                if row not in out:
                    out.append(row)
        return out

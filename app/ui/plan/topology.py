"""The Topology tree: All Managers > managers (host, OS, fio) > workers, as in Iometer."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFont, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from app.model.plan import Plan, Worker
from app.ui.plan.hosts import HostFacts, where_label
from app.ui.plan.network_pairs import topology_label

ROLE = Qt.ItemDataRole.UserRole
DETAIL_ROLE = Qt.ItemDataRole.UserRole + 1  # muted second line(s) under a manager's name


class _TwoLineDelegate(QStyledItemDelegate):
    """Draws a manager as its name with where it runs, OS and fio version in muted text below."""

    def _detail(self, index: QModelIndex) -> list[str]:
        d = index.data(DETAIL_ROLE)
        return d.split("\n") if d else []

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        lines = self._detail(index)
        if lines:
            fm = option.fontMetrics  # as paint() stacks them: 2 px above, the name, the lines, 2 px below
            size.setHeight(max(size.height(), 4 + (1 + len(lines)) * fm.lineSpacing()))
            size.setWidth(max(size.width(), max(fm.horizontalAdvance(t) for t in lines) + 8))
        return size

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        lines = self._detail(index)
        if not lines:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        fm = opt.fontMetrics
        step = fm.lineSpacing()  # height plus the font's leading: Windows fonts need it, or lines touch
        rect = opt.rect.adjusted(4, 2, -2, 0)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = QPalette.ColorGroup.Normal
        main = opt.palette.color(
            group, QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        brush = index.data(Qt.ItemDataRole.ForegroundRole)
        if brush is not None and not selected:  # a manager lost mid-run is greyed
            main = brush.color()
        muted = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText
        painter.save()
        bold = QFont(opt.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(main)
        painter.drawText(
            QRect(rect.left(), rect.top(), rect.width(), step),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            text,
        )
        painter.setFont(QFont(option.font))
        painter.setPen(opt.palette.color(group, muted))
        for i, line in enumerate(lines, start=1):
            painter.drawText(
                QRect(rect.left(), rect.top() + i * step, rect.width(), step),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                fm.elidedText(line, Qt.TextElideMode.ElideRight, rect.width()),
            )
        painter.restore()


@dataclass(frozen=True)
class Selection:
    """What the Topology has selected: everything, one manager, or one worker."""

    manager: int | None = None
    worker: int | None = None

    @property
    def is_all(self) -> bool:
        return self.manager is None

    @property
    def is_worker(self) -> bool:
        return self.worker is not None

    def worker_in(self, plan: Plan) -> Worker | None:
        """The selected worker of ``plan``; None when no worker is selected (or it is gone)."""
        if self.worker is None or self.manager is None:
            return None
        try:
            return plan.managers[self.manager].workers[self.worker]
        except IndexError:
            return None


class TopologyTree(QTreeWidget):
    selection_changed = Signal(object)  # Selection

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setHeaderLabels(["Topology"])
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformRowHeights(False)
        self.setMinimumWidth(170)
        self.facts: dict[str, HostFacts] = {}
        self.lost: dict[str, str] = {}  # managers whose fio failed in the current run: name -> cause
        self._selection = Selection()
        self.setItemDelegate(_TwoLineDelegate(self))
        self.currentItemChanged.connect(self._on_current)

    @property
    def selection(self) -> Selection:
        return self._selection

    def rebuild(self, plan: Plan, keep: Selection | None = None) -> None:
        keep = keep if keep is not None else self._selection
        self.blockSignals(True)
        self.clear()
        root = QTreeWidgetItem(self, ["All Managers"])
        root.setData(0, ROLE, Selection())
        root.setToolTip(0, "Every manager of the plan; results here are the sums over all managers")
        target_item = root
        for mi, m in enumerate(plan.managers):
            lost = self.lost.get(m.name)
            item = QTreeWidgetItem(root, [f"{m.name} — lost" if lost else m.name])
            item.setData(0, DETAIL_ROLE, f"failed: {lost}" if lost else self._manager_detail(m))
            item.setData(0, ROLE, Selection(mi))
            item.setToolTip(0, self._manager_tip(m) + "\n" + item.data(0, DETAIL_ROLE))
            if lost:
                item.setForeground(
                    0, self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
                )
            if keep == Selection(mi):
                target_item = item
            for wi, w in enumerate(m.workers):
                wit = QTreeWidgetItem(item, [w.name if w.kind == "disk" else topology_label(plan, mi, w)])
                wit.setData(0, ROLE, Selection(mi, wi))
                n_t, n_s = len(w.targets), len(w.specs)
                wit.setToolTip(
                    0, f"{n_t} target(s), {n_s} assigned access spec(s), {w.queue_depth} outstanding I/Os"
                )
                if lost:
                    wit.setForeground(
                        0, self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
                    )
                if keep == Selection(mi, wi):
                    target_item = wit
        self.expandAll()
        self.blockSignals(False)
        self.setCurrentItem(target_item)
        self._set(target_item.data(0, ROLE))

    def _manager_detail(self, m) -> str:
        lines = [where_label(m)]
        facts = self.facts.get(m.name)
        if facts:
            detail = ", ".join(
                x for x in (facts.os, f"fio {facts.fio_version}" if facts.fio_version else "") if x
            )
            if facts.error and not facts.fio_version:
                detail = ", ".join(x for x in (facts.os, facts.error) if x)
            if detail:
                lines.append(detail)
        return "\n".join(lines)

    def _manager_tip(self, m) -> str:
        tip = f"Manager {m.name!r} runs on {where_label(m)}"
        if m.address_in_file.strip():
            tip += f"\nThe imported file's author ran Dynamo at {m.address_in_file} (never contacted)"
        return tip

    def set_facts(self, manager_name: str, facts: HostFacts) -> None:
        self.facts[manager_name] = facts

    def select(self, sel: Selection) -> None:
        it = self._find(sel)
        if it is not None:
            self.setCurrentItem(it)

    def _find(self, sel: Selection) -> QTreeWidgetItem | None:
        stack = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while stack:
            it = stack.pop()
            if it.data(0, ROLE) == sel:
                return it
            stack.extend(it.child(i) for i in range(it.childCount()))
        return None

    def _on_current(self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        if current is not None:
            self._set(current.data(0, ROLE))

    def _set(self, sel: Selection) -> None:
        if sel != self._selection:
            self._selection = sel
            self.selection_changed.emit(sel)

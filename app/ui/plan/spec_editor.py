"""The access specification editor: name, default assignment and one or more lines of Iometer's
eight fields, each checked as it is typed (error next to the field, OK disabled until all is well)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.model.fidelity import spec_notes
from app.model.plan import ASSIGNMENTS, IDLE, AccessSpec, SpecLine
from app.model.units import format_bytes, parse_int, parse_size
from app.model.validation import MAX_SPEC_LINES, MAX_TRANSFER
from app.ui.widgets import button, compact_rows, error_label
from icf_import.read_specs import percent_total_words


@dataclass(frozen=True)
class Field:
    key: str  # SpecLine attribute
    label: str
    column: str  # short table header, with unit
    unit: str
    lo: int
    hi: int
    is_size: bool
    tip: str


FIELDS = (
    Field(
        "size",
        "Transfer request size",
        "Size",
        "bytes",
        1,
        MAX_TRANSFER,
        True,
        "How many bytes each I/O transfers. Type bytes or a size such as 4k, 64 KiB, 1M "
        "(K = 1024 bytes, as in Iometer). Iometer allows 1 byte to 1023 MB + 1023 KB + 1023 B.",
    ),
    Field(
        "of_size",
        "Percent of access specification",
        "% of size",
        "%",
        0,
        100,
        False,
        "How often this line is used: the probability that a burst of I/Os uses this line's settings. "
        "The percentages of all lines must add up to 100.",
    ),
    Field(
        "reads",
        "Percent read",
        "% reads",
        "%",
        0,
        100,
        False,
        "Read/write distribution: each I/O is a read with this probability, otherwise a write. "
        "100 = only reads, 0 = only writes (writes destroy data on raw disks).",
    ),
    Field(
        "random",
        "Percent random",
        "% random",
        "%",
        0,
        100,
        False,
        "Random/sequential distribution: each I/O goes to a random offset with this probability, "
        "otherwise it continues where the previous I/O on that target ended.",
    ),
    Field(
        "delay",
        "Transfer delay",
        "Delay",
        "ms",
        0,
        3_600_000,
        False,
        "Milliseconds to wait before each burst of I/Os. 0 = no delay (I/Os are issued as fast as the "
        "outstanding I/O count allows).",
    ),
    Field(
        "burst",
        "Burst length",
        "Burst",
        "I/Os",
        1,
        1 << 20,
        False,
        "How many I/Os are issued back to back between delays. Only matters when the delay is above 0.",
    ),
    Field(
        "align",
        "Align I/Os on",
        "Align",
        "bytes",
        0,
        MAX_TRANSFER,
        True,
        "Where I/Os start: 0 = sector boundaries (the disk's sector, or the file system block for test "
        "files); a value equal to the transfer size = request size boundaries; any other value = that "
        "many bytes.",
    ),
    Field(
        "reply",
        "Reply size",
        "Reply",
        "bytes",
        0,
        MAX_TRANSFER,
        True,
        "0 = no reply. Otherwise each request is followed by a reply I/O of this size in the opposite "
        "direction (Iometer's transactions, meant for network workers). fio cannot reproduce replies.",
    ),
)
FIELD_BY_KEY = {f.key: f for f in FIELDS}
ASSIGNMENT_TIPS = (
    "NONE: new workers start without this spec. ALL: every new worker gets it. "
    "DISK / NET: new disk / network workers get it."
)


def check_field(f: Field, text: str) -> tuple[int | None, str]:
    """(value, error message) for one typed field."""
    value = parse_size(text) if f.is_size else parse_int(text)
    if value is None:
        example = "a size such as 4096, 4k or 64 KiB" if f.is_size else "a whole number"
        return None, f"{f.label} must be {example}."
    if not f.lo <= value <= f.hi:
        hi = format_bytes(f.hi) if f.is_size and f.hi == MAX_TRANSFER else f"{f.hi}"
        return None, f"{f.label} must be from {f.lo} to {hi} {f.unit}, got {value}."
    return value, ""


def _line_texts(line: SpecLine) -> dict[str, str]:
    return {
        f.key: (
            format_bytes(getattr(line, f.key), exact=True)
            if f.is_size and getattr(line, f.key)
            else str(getattr(line, f.key))
        )
        for f in FIELDS
    }


class SpecEditor(QDialog):
    """Edit a copy of ``spec``; ``result_spec()`` gives the edited spec after accept()."""

    def __init__(
        self,
        spec: AccessSpec,
        taken_names: set[str],
        title: str = "Edit Access Specification",
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(820, 640)
        self.taken = {n.casefold() for n in taken_names}
        self.texts: list[dict[str, str]] = [_line_texts(ln) for ln in spec.lines] or [_line_texts(SpecLine())]
        self.current = 0
        self._loading = False

        lay = QVBoxLayout(self)
        top = QFormLayout()
        self.name = QLineEdit(spec.name)
        self.name.setToolTip(
            "The spec's name, as workers and reports show it. No commas (Iometer's files cut names there)."
        )
        self.name_error = error_label()
        row = QHBoxLayout()
        row.addWidget(self.name, 2)
        row.addWidget(self.name_error, 1)
        top.addRow("Name:", row)
        self.assignment = QComboBox()
        self.assignment.addItems(list(ASSIGNMENTS))
        self.assignment.setCurrentText(
            spec.default_assignment if spec.default_assignment in ASSIGNMENTS else "NONE"
        )
        self.assignment.setToolTip(ASSIGNMENT_TIPS)
        top.addRow("Default assignment:", self.assignment)
        lay.addLayout(top)

        lines_box = QGroupBox("Lines (each burst of I/Os picks one line with its '% of size' probability)")
        llay = QVBoxLayout(lines_box)
        self.table = QTableWidget(0, len(FIELDS))
        compact_rows(self.table)
        self.table.setHorizontalHeaderLabels(
            [f"{f.column}" + ("" if f.unit == "%" else f"\n({f.unit})") for f in FIELDS]
        )
        for c, f in enumerate(FIELDS):
            self.table.horizontalHeaderItem(c).setToolTip(f.tip)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        llay.addWidget(self.table)
        brow = QHBoxLayout()
        brow.addWidget(
            button(
                "Insert line",
                "Add a line after the selected one (2 KiB, 67% reads, "
                "100% random: Iometer's new-line defaults)",
                self.insert_line,
            )
        )
        brow.addWidget(button("Delete line", "Remove the selected line", self.delete_line))
        brow.addWidget(button("Move up", "Move the selected line up", lambda: self.move_line(-1)))
        brow.addWidget(button("Move down", "Move the selected line down", lambda: self.move_line(1)))
        brow.addStretch(1)
        self.total = QLabel()
        brow.addWidget(self.total)
        llay.addLayout(brow)
        lay.addWidget(lines_box, 1)

        self.line_box = QGroupBox()
        form = QFormLayout(self.line_box)
        self.edits: dict[str, QLineEdit] = {}
        self.errors: dict[str, QLabel] = {}
        for f in FIELDS:
            edit = QLineEdit()
            edit.setToolTip(f.tip)
            edit.setObjectName(f"field_{f.key}")
            edit.setFixedWidth(150)
            err = error_label()
            unit = QLabel(f.unit)
            unit.setFixedWidth(50)
            row = QHBoxLayout()
            row.addWidget(edit)
            row.addWidget(unit)
            row.addWidget(err, 1)
            label = QLabel(f.label + ":")
            label.setToolTip(f.tip)
            form.addRow(label, row)
            edit.textEdited.connect(lambda text, key=f.key: self._edited(key, text))
            self.edits[f.key] = edit
            self.errors[f.key] = err
        lay.addWidget(self.line_box)

        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        lay.addWidget(self.notes)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

        self.name.textEdited.connect(lambda _t: self.validate())
        self.table.currentCellChanged.connect(lambda row, _c, _pr, _pc: self._select_line(row))
        self._fill_table()
        self.table.selectRow(0)
        self._select_line(0)

    # --- lines ------------------------------------------------------------------------------
    def _fill_table(self) -> None:
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.texts))
        for r, texts in enumerate(self.texts):
            for c, f in enumerate(FIELDS):
                _v, err = check_field(f, texts[f.key])
                it = QTableWidgetItem(texts[f.key])
                it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if err:
                    it.setForeground(Qt.GlobalColor.red)
                    it.setToolTip(err)
                self.table.setItem(r, c, it)
        self.table.blockSignals(False)
        self.validate()

    def _select_line(self, row: int) -> None:
        if not 0 <= row < len(self.texts):
            return
        self.current = row
        self.line_box.setTitle(f"Line {row + 1} of {len(self.texts)}")
        self._loading = True
        for f in FIELDS:
            self.edits[f.key].setText(self.texts[row][f.key])
        self._loading = False
        self.validate()

    def _edited(self, key: str, text: str) -> None:
        if self._loading:
            return
        self.texts[self.current][key] = text
        it = self.table.item(self.current, [f.key for f in FIELDS].index(key))
        if it is not None:
            it.setText(text)
            _v, err = check_field(FIELD_BY_KEY[key], text)
            it.setData(Qt.ItemDataRole.ForegroundRole, QColor(Qt.GlobalColor.red) if err else None)
            it.setToolTip(err)
        self.validate()

    def insert_line(self) -> None:
        if len(self.texts) >= MAX_SPEC_LINES:
            return
        at = self.current + 1
        self.texts.insert(at, _line_texts(SpecLine(of_size=0)))
        self._fill_table()
        self.table.selectRow(at)

    def delete_line(self) -> None:
        if len(self.texts) <= 1:
            return
        del self.texts[self.current]
        self.current = min(self.current, len(self.texts) - 1)
        self._fill_table()
        self.table.selectRow(self.current)
        self._select_line(self.current)

    def move_line(self, delta: int) -> None:
        new = self.current + delta
        if not 0 <= new < len(self.texts):
            return
        self.texts[self.current], self.texts[new] = self.texts[new], self.texts[self.current]
        self._fill_table()
        self.table.selectRow(new)

    # --- checking ---------------------------------------------------------------------------
    def line_errors(self, row: int) -> dict[str, str]:
        return {f.key: err for f in FIELDS if (err := check_field(f, self.texts[row][f.key])[1])}

    def of_size_total(self) -> int | None:
        values = [check_field(FIELD_BY_KEY["of_size"], t["of_size"])[0] for t in self.texts]
        return None if any(v is None for v in values) else sum(values)

    def name_problem(self) -> str:
        name = self.name.text().strip()
        if not name:
            return "Enter a name."
        if "," in name:
            return "No commas in names (Iometer cuts names there)."
        if name.casefold() == IDLE.casefold():
            return "'Idle' is Iometer's built-in no-I/O spec; choose another name."
        if name.casefold() in self.taken:
            return f"A spec named {name!r} already exists."
        return ""

    def validate(self) -> bool:
        """Show every problem next to its field; OK is enabled only when there is none."""
        ok = True
        msg = self.name_problem()
        self.name_error.setText(msg)
        self.name_error.setVisible(bool(msg))
        ok &= not msg
        current = self.line_errors(self.current)
        for key, lab in self.errors.items():
            lab.setText(current.get(key, ""))
            lab.setVisible(key in current)
        other_bad = [r + 1 for r in range(len(self.texts)) if r != self.current and self.line_errors(r)]
        ok &= not current and not other_bad
        total = self.of_size_total()
        if total is not None and total != 100:
            ok = False
            text = percent_total_words(total).replace(" (Access Specifications > Edit)", "")
            lab = self.errors["of_size"]
            lab.setText((lab.text() + " " if lab.text() else "") + text)
            lab.setVisible(True)
            self.total.setText(f"<span style='color:#d32f2f'>Total: {total} %, not 100</span>")
        else:
            self.total.setText(f"Total: {total} %" if total is not None else "")
        if other_bad:
            self.total.setText(
                self.total.text() + f"  <span style='color:#d32f2f'>errors in line(s) "
                f"{', '.join(map(str, other_bad))}</span>"
            )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)
        spec = self.result_spec() if ok else None
        notes = spec_notes(spec) if spec else []
        self.notes.setText(
            "What fio cannot reproduce exactly:\n" + "\n".join(f"• {n.message}" for n in notes)
            if notes
            else ""
        )
        self.notes.setVisible(bool(notes))
        return ok

    def accept(self) -> None:
        if self.validate():
            super().accept()

    def result_spec(self) -> AccessSpec:
        lines = [SpecLine(**{f.key: check_field(f, t[f.key])[0] for f in FIELDS}) for t in self.texts]
        return AccessSpec(self.name.text().strip(), lines, self.assignment.currentText())

"""The History tab's editor for the selected run: name, tags, description and notes, saved to the store."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.store import Store, annotate_run, rename_run, tag_run
from app.ui.history.history_model import HistoryRow, local_time, places_text
from app.ui.widgets import error_label


def parse_tags(text: str) -> list[str]:
    """'before, client-x,, before' -> ['before', 'client-x'] (commas separate; any case counts once)."""
    out: list[str] = []
    for t in text.split(","):
        t = t.strip()
        if t and t.casefold() not in {x.casefold() for x in out}:
            out.append(t)
    return out


@dataclass
class RunEdit:
    """What changes for one run; None = unchanged."""

    run_id: int
    name: str | None = None
    add_tags: list[str] | None = None
    remove_tags: list[str] | None = None
    description: str | None = None
    notes: str | None = None

    @property
    def empty(self) -> bool:
        return all(
            v is None for v in (self.name, self.add_tags, self.remove_tags, self.description, self.notes)
        )

    def apply(self, store: Store) -> None:
        """Write the changes (a store task); RunNotFound if the run was deleted meanwhile."""
        if self.name is not None:
            rename_run(store, self.run_id, self.name)
        if self.add_tags or self.remove_tags:
            tag_run(store, self.run_id, add=self.add_tags or [], remove=self.remove_tags or [])
        if self.notes is not None or self.description is not None:
            annotate_run(store, self.run_id, notes=self.notes, description=self.description)


def edit_between(row: HistoryRow, name: str, tags: list[str], description: str, notes: str) -> RunEdit:
    r = row.run
    edit = RunEdit(r.id)
    if name != r.name:
        edit.name = name
    if tags != r.tags:
        edit.remove_tags = [t for t in r.tags if t not in tags]
        edit.add_tags = [t for t in tags if t not in r.tags]
    if description != r.description:
        edit.description = description
    if notes != r.notes:
        edit.notes = notes
    return edit


class RunEditor(QWidget):
    """Edits one run; ``save_requested(RunEdit)`` when the user saves."""

    save_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.row: HistoryRow | None = None
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        f = self.heading.font()
        f.setBold(True)
        self.heading.setFont(f)
        self.facts = QLabel()
        self.facts.setWordWrap(True)
        self.facts.setEnabled(False)
        self.name = QLineEdit()
        self.name.setPlaceholderText("a name for this run, e.g. EVA 4400 Vraid1")
        self.tags = QLineEdit()
        self.tags.setPlaceholderText("comma-separated, e.g. before, client-x")
        self.tags.setToolTip(
            "Tags group runs: runs of the same plan with the same tags count as repeats of one "
            "measurement, and their spread is the run-to-run noise in comparisons."
        )
        self.description = QLineEdit()
        self.notes = QPlainTextEdit()
        self.notes.setPlaceholderText(
            "What was different about this run: firmware, RAID level, cache settings…"
        )
        self.notes.setTabChangesFocus(True)
        self.error = error_label()
        self.save_button = QPushButton("Save changes")
        self.save_button.setToolTip("Write the name, tags, description and notes to the results database")
        self.revert_button = QPushButton("Revert")
        self.save_button.clicked.connect(self.save)
        self.revert_button.clicked.connect(lambda: self.show_row(self.row))

        form = QFormLayout()
        form.addRow("Name:", self.name)
        form.addRow("Tags:", self.tags)
        form.addRow("Description:", self.description)
        form.addRow("Notes:", self.notes)
        buttons = QHBoxLayout()
        buttons.addWidget(self.error)
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.heading)
        lay.addWidget(self.facts)
        lay.addLayout(form, 1)
        lay.addLayout(buttons)
        for w in (self.name, self.tags, self.description):
            w.textChanged.connect(self._update_buttons)
        self.notes.textChanged.connect(self._update_buttons)
        self.show_row(None)

    def show_row(self, row: HistoryRow | None, selected: int = 1) -> None:
        """The run to edit; None with ``selected`` > 1 says how many are selected."""
        self.row = row
        fields = (self.name, self.tags, self.description, self.notes)
        for w in fields:
            w.blockSignals(True)
        self.error.hide()
        if row is None:
            self.heading.setText(f"{selected} runs selected" if selected > 1 else "No run selected")
            self.facts.setText(
                "Select one run to rename it, tag it or write notes about it." if selected != 1 else ""
            )
            for w in fields:
                w.clear() if isinstance(w, QPlainTextEdit) else w.setText("")
        else:
            r = row.run
            self.heading.setText(f"{row.label()} \u2014 {r.status}")
            where = places_text(row.places)
            self.facts.setText(
                f"Started {local_time(r.started, True)}"
                + (f", ended {local_time(r.ended, True)}" if r.ended else "")
                + f" \u00b7 plan {r.plan_name or '(unnamed)'} \u00b7 {r.step_count} "
                f"step{'s' * (r.step_count != 1)}" + (f" \u00b7 {where}" if where else "")
            )
            self.name.setText(r.name)
            self.tags.setText(", ".join(r.tags))
            self.description.setText(r.description)
            self.description.setCursorPosition(0)  # its beginning shown, not its tail
            self.notes.setPlainText(r.notes)
        for w in fields:
            w.setEnabled(row is not None)
            w.blockSignals(False)
        self._update_buttons()

    def pending(self) -> RunEdit | None:
        if self.row is None:
            return None
        return edit_between(
            self.row,
            self.name.text().strip(),
            parse_tags(self.tags.text()),
            self.description.text().strip(),
            self.notes.toPlainText().rstrip(),
        )

    def _update_buttons(self) -> None:
        edit = self.pending()
        dirty = edit is not None and not edit.empty
        self.save_button.setEnabled(dirty)
        self.revert_button.setEnabled(dirty)

    def save(self) -> None:
        edit = self.pending()
        if edit is None or edit.empty:
            return
        if edit.name == "":
            self.error.setText("Give the run a name.")
            self.error.show()
            return
        self.error.hide()
        self.save_requested.emit(edit)

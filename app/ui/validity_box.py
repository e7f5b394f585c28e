"""A small box of a run's validity notes (app.analysis.validity): shown in the Results tab once a run has
ended and in History's run view, each note with the figure that triggered it and what to do."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget


class ValidityBox(QFrame):
    """Warning-coloured when the run carries notes; one quiet line when it carries none; hidden before a run."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("validityBox")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.addWidget(self.label)
        self.lines: list[str] = []
        self.hide()

    def set_lines(self, lines: list[str]) -> None:
        """The notes as text lines (``validity.lines``); an empty list says the run carries none."""
        self.lines = list(lines)
        if lines:
            self.setStyleSheet(
                "#validityBox { border-left: 4px solid #d9822b; background: rgba(217, 130, 43, 40); }"
            )
            self.label.setText(
                "<b>Validity notes</b> \u2014 read these before the figures:<ul style='margin: 0'>"
                + "".join(f"<li>{escape(line)}</li>" for line in lines)
                + "</ul>"
            )
            self.label.setEnabled(True)
        else:
            self.setStyleSheet("")
            self.label.setText(
                "Validity: no notes (no sign of cache, never-written or compressible data, a busy "
                "generator, drift, other traffic or clock skew)."
            )
            self.label.setEnabled(False)
        self.show()

    def set_computing(self) -> None:
        """A run stored without its notes: they are being computed (off the GUI thread)."""
        self.lines = []
        self.setStyleSheet("")
        self.label.setText(
            "Validity notes: computing them from the stored run (it was stored without them)\u2026"
        )
        self.label.setEnabled(False)
        self.show()

    def set_failed(self, message: str) -> None:
        """The notes could not be computed: say so (the figures below are shown all the same)."""
        self.lines = []
        self.setStyleSheet("")
        self.label.setText(f"Validity notes could not be computed: {escape(message)}")
        self.label.setEnabled(True)
        self.show()

    def set_notes(self, notes: list) -> None:
        from app.analysis.validity import lines

        self.set_lines(lines(notes))

"""A small box of a run's validity notes (app.analysis.validity): shown in the Results tab once a run has
ended and in History's run view, each note with the figure that triggered it and what to do. It stands as
one line (how many notes, the first one) that opens to all of them on a click, so that the charts and the
statistics below keep their height on a laptop screen."""

from __future__ import annotations

from html import escape

from app.ui.fold_box import FoldBox

WARN_STYLE = "#validityBox { border-left: 4px solid #d9822b; background: rgba(217, 130, 43, 40); }"


class ValidityBox(FoldBox):
    """Warning-coloured when the run carries notes; one quiet line when it carries none; hidden before a run."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("validityBox")
        self.lines: list[str] = []
        self.hide()

    def _quiet(self, text: str, enabled: bool = False) -> None:
        self.setStyleSheet("")
        self.set_open(False)
        self.set_content(text, escape(text), more=False)
        self.summary.setToolTip(text)
        self.summary.setEnabled(enabled)
        self.label.setEnabled(enabled)
        self.show()

    def set_lines(self, lines: list[str]) -> None:
        """The notes as text lines (``validity.lines``); an empty list says the run carries none."""
        self.lines = list(lines)
        if not lines:
            self._quiet(
                "Validity: no notes (no sign of cache, never-written or compressible data, a busy "
                "generator, drift, other traffic or clock skew)."
            )
            return
        self.setStyleSheet(WARN_STYLE)
        n = len(lines)
        self.set_content(
            f"Validity notes ({n}) \u2014 read before the figures: {lines[0]}"
            + (f"  (+{n - 1} more)" if n > 1 else ""),
            "<b>Validity notes</b> \u2014 read these before the figures:<ul style='margin: 0'>"
            + "".join(f"<li>{escape(line)}</li>" for line in lines)
            + "</ul>",
        )
        self.summary.setEnabled(True)
        self.label.setEnabled(True)
        self.show()

    def set_computing(self) -> None:
        """A run stored without its notes: they are being computed (off the GUI thread)."""
        self.lines = []
        self._quiet("Validity notes: computing them from the stored run (it was stored without them)\u2026")

    def set_failed(self, message: str) -> None:
        """The notes could not be computed: say so (the figures below are shown all the same)."""
        self.lines = []
        self._quiet(f"Validity notes could not be computed: {message}", enabled=True)

    def set_notes(self, notes: list) -> None:
        from app.analysis.validity import lines

        self.set_lines(lines(notes))

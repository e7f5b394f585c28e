"""One-click reports: title, client, author, date, paper, formats and folder; the files are written on a
background thread while the window stays usable, then the folder is one click away."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QDate, QLocale, QSettings, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.report.document import PAPERS, ReportMeta
from app.ui.history.compare_data import CompareRequest
from app.ui.history.report_files import (
    FORMAT_TITLES,
    FORMATS,
    default_name,
    output_paths,
    safe_name,
    write_report,
)
from app.ui.history.store_tasks import StoreTasks
from app.ui.user_desk import UserDesk
from app.ui.widgets import error_label

DEFAULT_TITLE = "Storage performance report"
DEFAULT_FORMATS = ("html", "pdf")
LETTER_COUNTRIES = {
    QLocale.Country.UnitedStates,
    QLocale.Country.Canada,
    QLocale.Country.Mexico,
    QLocale.Country.Chile,
    QLocale.Country.Colombia,
    QLocale.Country.Philippines,
}


def open_folder(folder: Path) -> bool:
    """Show the folder in the file manager (tests replace this)."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


def describe(req: CompareRequest, labels: dict[int, str]) -> list[tuple[str, str]]:
    """What the report holds, as (label, text) lines."""

    def side(ids: list[int]) -> str:
        return " + ".join(labels.get(i, f"Run {i}") for i in ids)

    if not req.candidates:
        return [("Run", side(req.baseline))]
    match = {
        "spec": "by access specification alone",
        "exact": "by access specification, queue depth and target set",
    }.get(req.match, "by access specification and place in the sequence (load changes listed)")
    noise = f"within {req.threshold_pct:g} %" + (" or the spread of repeated runs" if req.repeats else "")
    return [
        ("Baseline", side(req.baseline)),
        ("Compared with", ", ".join(side(g) for g in req.candidates)),
        ("Steps paired", match),
        ("Noise", f"changes {noise} are not marked"),
    ]


class ReportDialog(QDialog):
    """Non-modal: ``show()`` it. ``desk`` gives ``ask`` (overwrite?), ``statusBar`` and ``settings``."""

    written = Signal(list)  # paths

    def __init__(
        self,
        desk: UserDesk,
        request: CompareRequest,
        tasks: StoreTasks,
        labels: dict[int, str] | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.desk = desk
        self.request = request
        self.tasks = tasks
        self.writing = False
        self.last_written: list[Path] = []
        self.settings: QSettings | None = desk.settings
        self.setWindowTitle("Write a report")

        what = QFormLayout()
        for i, (label, text) in enumerate(describe(request, labels or {})):
            value = QLabel(text)
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if i < 2:
                f = value.font()
                f.setBold(True)
                value.setFont(f)
            what.addRow(f"{label}:", value)

        self.title = QLineEdit(self._setting("title", DEFAULT_TITLE))
        self.client = QLineEdit(self._setting("client", ""))
        self.client.setPlaceholderText("who the report is for (cover page)")
        self.author = QLineEdit(self._setting("author", ""))
        self.author.setPlaceholderText("you (cover page)")
        self.company = QLineEdit(self._setting("company", ""))
        self.company.setPlaceholderText("your company (cover page, header)")
        self.logo = QLineEdit(self._setting("logo", ""))
        self.logo.setPlaceholderText("optional: a PNG or JPEG for the cover page")
        logo_browse = QPushButton("Browse\u2026")
        logo_browse.clicked.connect(self._browse_logo)
        lrow = QHBoxLayout()
        lrow.addWidget(self.logo, 1)
        lrow.addWidget(logo_browse)
        # what each side is called: the baseline's, then each candidate's (empty: its tags or name)
        self.labels: list[QLineEdit] = []
        sides = [request.baseline, *request.candidates]
        for ids in sides:
            edit = QLineEdit()
            runs = ", ".join(map(str, ids))
            edit.setPlaceholderText(f"automatic: the runs' tags or name (run{'s' * (len(ids) > 1)} {runs})")
            edit.setToolTip(
                "What the report calls this side, e.g. before / after; empty: the runs' tags where "
                "they tell the sides apart, else the run's name"
            )
            self.labels.append(edit)
        self.label_titles = (
            ["Label:"]
            if len(sides) == 1
            else ["Baseline label:"]
            + [f"Compared label{f' {i}' if len(sides) > 2 else ''}:" for i in range(1, len(sides))]
        )
        self.date = QDateEdit(QDate.currentDate())
        self.date.setCalendarPopup(True)
        self.date.setDisplayFormat("yyyy-MM-dd")
        self.paper = QComboBox()
        self.paper.addItems(list(PAPERS))
        default_paper = "Letter" if QLocale().territory() in LETTER_COUNTRIES else "A4"
        self.paper.setCurrentText(self._setting("paper", default_paper))
        self.paper.setToolTip("Paper size of the PDF")

        self.formats: dict[str, QCheckBox] = {}
        chosen = self._setting("formats", ",".join(DEFAULT_FORMATS)).split(",")
        fbox = QVBoxLayout()
        fbox.setSpacing(2)
        for k in FORMATS:
            cb = QCheckBox(FORMAT_TITLES[k])
            cb.setChecked(k in chosen)
            cb.toggled.connect(lambda _c: self._update())
            self.formats[k] = cb
            fbox.addWidget(cb)

        self.folder = QLineEdit(self._setting("folder", str(Path.home())))
        browse = QPushButton("Browse\u2026")
        browse.clicked.connect(self._browse)
        frow = QHBoxLayout()
        frow.addWidget(self.folder, 1)
        frow.addWidget(browse)
        self.name = QLineEdit(default_name(request))
        self.name.setToolTip("The files' name; each format adds its own suffix")
        self.files = QLabel()
        self.files.setWordWrap(True)
        self.files.setEnabled(False)
        self.files.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for w in (self.folder, self.name):
            w.textChanged.connect(lambda _t: self._update())

        form = QFormLayout()
        form.addRow("Title:", self.title)
        form.addRow("Client:", self.client)
        form.addRow("Author:", self.author)
        form.addRow("Company:", self.company)
        form.addRow("Logo:", lrow)
        for title, edit in zip(self.label_titles, self.labels, strict=True):
            form.addRow(title, edit)
        form.addRow("Date:", self.date)
        form.addRow("Paper:", self.paper)
        form.addRow("Formats:", fbox)
        form.addRow("Folder:", frow)
        form.addRow("File name:", self.name)
        form.addRow("", self.files)

        self.error = error_label()
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result.hide()
        self.buttons = QDialogButtonBox()
        self.write_button = self.buttons.addButton("Write report", QDialogButtonBox.ButtonRole.AcceptRole)
        self.open_button = self.buttons.addButton("Open folder", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.hide()
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.write_button.setDefault(True)
        self.write_button.clicked.connect(self.write)
        self.open_button.clicked.connect(self.open_output_folder)
        self.close_button.clicked.connect(self.close)

        lay = QVBoxLayout(self)
        lay.addLayout(what)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        lay.addWidget(line)
        lay.addLayout(form)
        lay.addWidget(self.error)
        lay.addWidget(self.progress)
        lay.addWidget(self.result)
        lay.addWidget(self.buttons)
        self.inputs = [
            self.title,
            self.client,
            self.author,
            self.company,
            self.logo,
            logo_browse,
            *self.labels,
            self.date,
            self.paper,
            *self.formats.values(),
            self.folder,
            browse,
            self.name,
        ]
        self.resize(560, self.sizeHint().height())
        self._update()

    # --- fields -------------------------------------------------------------------------------
    def _setting(self, key: str, default: str) -> str:
        if self.settings is None:
            return default
        return str(self.settings.value(f"report/{key}", default) or default)

    def _remember(self) -> None:
        if self.settings is None or not self.desk.persist:
            return
        for key, value in (
            ("title", self.title.text()),
            ("client", self.client.text()),
            ("author", self.author.text()),
            ("company", self.company.text()),
            ("logo", self.logo.text()),
            ("paper", self.paper.currentText()),
            ("formats", ",".join(self.chosen_formats())),
            ("folder", self.folder.text()),
        ):
            self.settings.setValue(f"report/{key}", value)

    def chosen_formats(self) -> list[str]:
        return [k for k, cb in self.formats.items() if cb.isChecked()]

    def outputs(self) -> dict[str, Path]:
        return output_paths(
            Path(self.folder.text().strip()).expanduser(), safe_name(self.name.text()), self.chosen_formats()
        )

    def meta(self) -> ReportMeta:
        return ReportMeta(
            title=self.title.text().strip() or DEFAULT_TITLE,
            client=self.client.text().strip(),
            author=self.author.text().strip(),
            date=self.date.date().toString("yyyy-MM-dd"),
            paper=self.paper.currentText(),
            labels=[e.text().strip() for e in self.labels],
            company=self.company.text().strip(),
            logo=self.logo.text().strip(),
        )

    def problem(self) -> str | None:
        """Why the report cannot be written as filled in, or None."""
        if not self.chosen_formats():
            return "Choose at least one format."
        folder = self.folder.text().strip()
        if not folder:
            return "Choose the folder the files go to."
        if not Path(folder).expanduser().is_dir():
            return f"The folder {folder} does not exist."
        if not safe_name(self.name.text()):
            return "Give the files a name."
        logo = self.logo.text().strip()
        if logo and not Path(logo).expanduser().is_file():
            return f"The logo {logo} does not exist (a PNG or JPEG file, or leave it empty)."
        given = [e.text().strip().casefold() for e in self.labels if e.text().strip()]
        if len(set(given)) != len(given):
            return "Give each side a different label (or leave them empty)."
        return None

    def _update(self) -> None:
        if self.writing:
            return
        out = self.outputs()
        self.files.setText(
            "Writes " + ", ".join(p.name for p in out.values()) if out and safe_name(self.name.text()) else ""
        )
        self.write_button.setEnabled(bool(out) and bool(safe_name(self.name.text())))

    def _browse_logo(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Logo for the cover page", self.logo.text(), "Images (*.png *.jpg *.jpeg)"
        )
        if path:
            self.logo.setText(path)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder for the report", self.folder.text())
        if folder:
            self.folder.setText(folder)

    # --- writing ------------------------------------------------------------------------------
    def write(self) -> None:
        if self.writing:
            return
        problem = self.problem()
        if problem:
            self.error.setText(problem)
            self.error.show()
            return
        self.error.hide()
        outputs = self.outputs()
        existing = [p for p in outputs.values() if p.exists()]
        if existing and not self.desk.ask(
            "Replace files?",
            "These files exist already:\n\n" + "\n".join(str(p) for p in existing) + "\n\nReplace them?",
        ):
            return
        self._remember()
        self._set_writing(True)
        req, meta = self.request, self.meta()
        self.tasks.submit(
            "writing the report",
            lambda store: write_report(store, req, meta, outputs),
            self._written,
            self._failed,
            owner=self,
        )

    def _set_writing(self, on: bool) -> None:
        self.writing = on
        for w in self.inputs:
            w.setEnabled(not on)
        self.write_button.setEnabled(not on)
        self.progress.setVisible(on)
        if on:
            self.result.hide()
            self.open_button.hide()
            self.result.setText("")
        else:
            self._update()

    def _written(self, paths: list[Path]) -> None:
        self._set_writing(False)
        self.last_written = paths
        folder = paths[0].parent if paths else Path(self.folder.text())
        self.result.setText(f"Written to {folder}:\n" + "\n".join(f"\u2022 {p.name}" for p in paths))
        self.result.setStyleSheet("")
        self.result.show()
        self.open_button.show()
        self.open_button.setFocus()
        self.desk.statusBar().showMessage(f"Report written to {folder}", 10000)
        self.written.emit(paths)

    def _failed(self, message: str) -> None:
        self._set_writing(False)
        self.result.setText(f"The report was not written: {message}")
        self.result.setStyleSheet("color: #d32f2f;")
        self.result.show()

    def open_output_folder(self) -> None:
        folder = self.last_written[0].parent if self.last_written else Path(self.folder.text())
        if not open_folder(folder):
            self.result.setText(self.result.text() + f"\n(The folder could not be opened: {folder})")

"""The report dialog: files written through app/report with the right content (the CLI's bytes for HTML),
on a background thread while the window keeps running, then the folder one click away; and its refusals."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import QDate, Qt, QTimer

from app.store import delete_run, open_store
from app.ui.history.report_dialog import ReportDialog
from app.ui.main_window import MainWindow
from tests.gui.history_support import before_after_store
from tests.stored_runs import BEFORE

WRITE_S = 1.5  # how long the patched PDF writer takes


def db_path() -> Path:
    return Path(os.environ["FIOMETER_DB"])


@pytest.fixture
def runs(window: MainWindow, qtbot) -> tuple[int, int]:
    ids = before_after_store(db_path(), samples=False)
    with qtbot.waitSignal(window.history.list.loaded, timeout=10000):
        window.history.show_history()
    return ids


def comparison_dialog(window: MainWindow, qtbot, ids: tuple[int, int]) -> ReportDialog:
    ui = window.history
    ui.list.select_runs(list(ids))
    qtbot.mouseClick(ui.list.compare_button, Qt.MouseButton.LeftButton)
    view = ui.workspace.currentWidget()
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    qtbot.mouseClick(view.report_button, Qt.MouseButton.LeftButton)
    dlg = ui.dialogs[-1]
    assert dlg.isVisible() and not dlg.isModal()  # the window stays usable
    return dlg


def fill(dlg: ReportDialog, folder: Path, formats: tuple[str, ...] = ("html", "pdf", "xlsx", "csv")) -> None:
    dlg.title.setText("EVA 4400 disk group expansion")
    dlg.client.setText("Example Corp")
    dlg.author.setText("Storage Consulting Ltd")
    dlg.date.setDate(QDate(2026, 3, 14))
    dlg.paper.setCurrentText("Letter")
    for k, cb in dlg.formats.items():
        cb.setChecked(k in formats)
    dlg.folder.setText(str(folder))


def write(dlg: ReportDialog, qtbot) -> list[Path]:
    with qtbot.waitSignal(dlg.written, timeout=60000) as sig:
        qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    return sig.args[0]


def pdf_text(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def test_a_comparison_report_in_every_format(
    window: MainWindow, qtbot, runs, tmp_path: Path, monkeypatch
) -> None:
    before, after = runs
    dlg = comparison_dialog(window, qtbot, runs)
    assert dlg.name.text() == f"fiometer-run-{before}-vs-{after}"
    fill(dlg, tmp_path)
    written = write(dlg, qtbot)
    base = f"fiometer-run-{before}-vs-{after}"
    assert [p.name for p in written] == [f"{base}.html", f"{base}.pdf", f"{base}.xlsx", f"{base}.csv"]

    text = pdf_text(tmp_path / f"{base}.pdf")
    for s in BEFORE:
        assert s.spec in text
    assert "EVA 4400 disk group expansion" in text and "Example Corp" in text and "2026-03-14" in text
    assert re.search(r"Max Throughput-50%Read\s+QD 64\s+1,530\s+5,113\s+\+3,583\s+\+234\.2 %\s+better", text)
    info = subprocess.run(["pdfinfo", str(tmp_path / f"{base}.pdf")], capture_output=True, text=True).stdout
    assert "612 x 792 pts" in info  # Letter, as chosen

    html = (tmp_path / f"{base}.html").read_text(encoding="utf-8")
    assert "+234.2 %" in html and 'data-value="5113.0"' in html and "Example Corp" in html

    with zipfile.ZipFile(tmp_path / f"{base}.xlsx") as z:
        sheet = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/sheet"))
        sheet += z.read("xl/sharedStrings.xml").decode()
    numbers = {float(v) for v in re.findall(r"<v>([-0-9.eE]+)</v>", sheet)}
    assert {10809.0, 11686.0, 1530.0, 5113.0, 2.67, 5.09} <= numbers
    assert "Max Throughput-50%Read" in sheet

    csv_text = (tmp_path / f"{base}.csv").read_text(encoding="utf-8-sig")
    assert f"{after},after,3,Max Throughput-50%Read,64,all,,ALL,iops,5113.0,IOPS" in csv_text

    # then the folder, one click away
    opened = []
    monkeypatch.setattr(
        "app.ui.history.report_dialog.open_folder", lambda folder: opened.append(folder) or True
    )
    assert dlg.open_button.isVisible() and str(tmp_path) in dlg.result.text()
    qtbot.mouseClick(dlg.open_button, Qt.MouseButton.LeftButton)
    assert opened == [tmp_path]
    assert "Report written to" in window.statusBar().currentMessage()


def test_the_window_writes_what_the_cli_writes(window: MainWindow, qtbot, runs, tmp_path: Path) -> None:
    before, after = runs
    dlg = comparison_dialog(window, qtbot, runs)
    fill(dlg, tmp_path, ("html", "csv"))
    write(dlg, qtbot)
    cli = tmp_path / "cli"
    cli.mkdir()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(db_path()),
            "report",
            str(before),
            "--compare",
            str(after),
            "--html",
            str(cli / "r.html"),
            "--csv",
            str(cli / "r.csv"),
            "--title",
            "EVA 4400 disk group expansion",
            "--client",
            "Example Corp",
            "--author",
            "Storage Consulting Ltd",
            "--date",
            "2026-03-14",
            "--paper",
            "Letter",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    base = tmp_path / f"fiometer-run-{before}-vs-{after}"
    assert base.with_suffix(".html").read_bytes() == (cli / "r.html").read_bytes()
    assert base.with_suffix(".csv").read_bytes() == (cli / "r.csv").read_bytes()


def test_one_run_report_from_its_view(window: MainWindow, qtbot, runs, tmp_path: Path) -> None:
    before, _after = runs
    view = window.history.open_run(before)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10000)
    qtbot.mouseClick(view.report_button, Qt.MouseButton.LeftButton)
    dlg = window.history.dialogs[-1]
    assert dlg.name.text() == f"fiometer-run-{before}"
    fill(dlg, tmp_path, ("pdf",))
    (pdf,) = write(dlg, qtbot)
    text = pdf_text(pdf)
    assert all(s.spec in text for s in BEFORE) and "10,809" in text


def test_writing_never_blocks_the_window(
    window: MainWindow, qtbot, runs, tmp_path: Path, monkeypatch
) -> None:
    """A slow PDF (a long report, a slow disk) is painted while the window keeps handling events."""
    import app.report.pdf as pdf

    real = pdf.write_pdf

    def slow(report, path):
        time.sleep(WRITE_S)
        real(report, path)

    monkeypatch.setattr(pdf, "write_pdf", slow)
    dlg = comparison_dialog(window, qtbot, runs)
    fill(dlg, tmp_path, ("pdf",))
    qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    assert dlg.writing  # the click came back while the slow write was still going
    assert dlg.progress.isVisible() and not dlg.write_button.isEnabled() and not dlg.title.isEnabled()
    lags = []
    while dlg.writing:
        fired: list[float] = []
        start = time.monotonic()
        QTimer.singleShot(0, lambda f=fired: f.append(time.monotonic()))
        qtbot.waitUntil(lambda f=fired: bool(f), timeout=5000)
        lags.append(fired[0] - start)
        qtbot.wait(50)
    # responsive: typical lag far below the write's duration, and never blocked through it (a busy machine
    # may delay a single event, so no tight bound on the worst one)
    assert len(lags) >= 5 and statistics.median(lags) < WRITE_S / 6 and max(lags) < WRITE_S
    assert dlg.last_written and dlg.last_written[0].stat().st_size > 1000


def test_existing_files_are_replaced_only_when_confirmed(
    window: MainWindow, qtbot, dialogs, runs, tmp_path: Path
) -> None:
    dlg = comparison_dialog(window, qtbot, runs)
    fill(dlg, tmp_path, ("html",))
    target = tmp_path / f"{dlg.name.text()}.html"
    target.write_text("keep me")
    dialogs.answer = False
    qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    assert dialogs.questions[-1][0] == "Replace files?" and str(target) in dialogs.questions[-1][1]
    assert not dlg.writing and target.read_text() == "keep me"
    dialogs.answer = True
    write(dlg, qtbot)
    assert "<html" in target.read_text(encoding="utf-8")


def test_refusals_are_plain_words(window: MainWindow, qtbot, runs, tmp_path: Path) -> None:
    before, _after = runs
    dlg = comparison_dialog(window, qtbot, runs)
    fill(dlg, tmp_path / "no such folder", ("html",))
    qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    assert (
        dlg.error.isVisible()
        and dlg.error.text() == f"The folder {tmp_path / 'no such folder'} does not exist."
    )
    for cb in dlg.formats.values():
        cb.setChecked(False)
    assert not dlg.write_button.isEnabled()

    # a run deleted after the dialog opened
    fill(dlg, tmp_path, ("html", "pdf"))
    with open_store(db_path()) as store:
        delete_run(store, before)
    qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dlg.writing, timeout=20000)
    assert dlg.result.text().startswith("The report was not written: There is no run")
    assert not dlg.open_button.isVisible() and dlg.write_button.isEnabled()
    assert list(tmp_path.glob("*.html")) == []


def test_the_dialog_remembers_author_client_and_folder(
    window: MainWindow, qtbot, runs, tmp_path: Path
) -> None:
    dlg = comparison_dialog(window, qtbot, runs)
    fill(dlg, tmp_path, ("csv",))
    write(dlg, qtbot)
    dlg.close()
    again = window.history.report(dlg.request)
    assert (again.author.text(), again.client.text(), again.folder.text()) == (
        "Storage Consulting Ltd",
        "Example Corp",
        str(tmp_path),
    )
    assert again.chosen_formats() == ["csv"] and again.paper.currentText() == "Letter"


def test_labels_company_and_logo_reach_the_report_and_company_and_logo_are_remembered(
    window: MainWindow, qtbot, runs, tmp_path: Path
) -> None:
    from PySide6.QtGui import QColor, QImage

    logo = tmp_path / "logo.png"
    img = QImage(120, 40, QImage.Format.Format_RGB32)
    img.fill(QColor("#1f5fa8"))
    assert img.save(str(logo))
    dlg = comparison_dialog(window, qtbot, runs)
    fill(dlg, tmp_path, ("html", "pdf"))
    assert len(dlg.labels) == 2
    dlg.labels[0].setText("Vraid5")
    dlg.labels[1].setText("Vraid5")
    dlg.company.setText("ACME Storage Consulting")
    dlg.logo.setText(str(logo))
    qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    assert "different label" in dlg.error.text()  # the same label twice says nothing
    dlg.labels[1].setText("Vraid1")
    written = write(dlg, qtbot)
    html = next(p for p in written if p.suffix == ".html").read_text(encoding="utf-8")
    assert re.search(r"<th class=num>Vraid5</th>\s*<th class=num>Vraid1</th>", html)
    assert "ACME Storage Consulting" in html and "data:image/png;base64," in html
    pdf = next(p for p in written if p.suffix == ".pdf")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    assert re.search(r"Author:\s+Storage Consulting Ltd, ACME Storage Consulting", info)
    assert re.search(r"Subject:\s+Storage performance: Vraid1 compared with Vraid5", info)
    assert "Vraid1 (run" in pdf_text(pdf)
    dlg.close()
    again = window.history.report(dlg.request)
    assert (again.company.text(), again.logo.text()) == ("ACME Storage Consulting", str(logo))
    assert [e.text() for e in again.labels] == ["", ""]  # labels belong to one report, not remembered

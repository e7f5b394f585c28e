"""Test Setup's I/O engine row: fio's engine (TestSetup.engine) and io_uring's options (engine_options)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QWidget

from app.model.plan import AUTO_ENGINE, ENGINES, URING_OPTIONS

ENGINE_TITLES = {
    AUTO_ENGINE: "Automatic",
    "io_uring": "io_uring (Linux)",
    "libaio": "libaio (Linux)",
    "posixaio": "posixaio",
    "psync": "psync (one I/O at a time)",
    "windowsaio": "windowsaio (Windows)",
}
ENGINE_TIPS = {
    AUTO_ENGINE: "io_uring on this machine when its kernel allows it, libaio on other Linux hosts (a remote "
    "host's kernel is not known), windowsaio on Windows",
    "io_uring": "Linux 5.1 or later; the run is refused where the kernel or fio cannot run it",
    "libaio": "Linux's native asynchronous I/O, what Fiometer used before io_uring",
    "posixaio": "POSIX asynchronous I/O (threads in the C library)",
    "psync": "synchronous pread/pwrite: queue depth 1 whatever the plan says",
    "windowsaio": "Windows' overlapped I/O (I/O completion ports)",
}
OPTION_TIPS = {
    "fixedbufs": "register the I/O buffers with the kernel once (fewer page pins per I/O)",
    "registerfiles": "register the files with the kernel once (fewer file lookups per I/O)",
    "sqthread_poll": "a kernel thread polls the submission queue: no system call per submission, one core busy",
    "hipri": "poll for completions instead of interrupts; needs a disk with polled queues (NVMe poll_queues)",
}


class EngineRow(QWidget):
    """A combo box of engines and a check box per io_uring option (enabled while io_uring can run)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.engine = QComboBox()
        for key in ENGINES:
            self.engine.addItem(ENGINE_TITLES[key], key)
            self.engine.setItemData(self.engine.count() - 1, ENGINE_TIPS[key], Qt.ItemDataRole.ToolTipRole)
        self.engine.setToolTip("fio's I/O engine: how the workers' I/O reaches the kernel")
        lay.addWidget(self.engine)
        self.options: dict[str, QCheckBox] = {}
        for name in URING_OPTIONS:
            box = QCheckBox(name)
            box.setToolTip(f"io_uring's {name}: {OPTION_TIPS[name]}")
            lay.addWidget(box)
            self.options[name] = box
            box.toggled.connect(self.changed)
        lay.addStretch(1)
        self.engine.currentIndexChanged.connect(self._engine_changed)

    def value(self) -> tuple[str, list[str]]:
        return self.engine.currentData(), [n for n, b in self.options.items() if b.isChecked()]

    def set_value(self, engine: str, options: list[str]) -> None:
        self.blockSignals(True)
        self.engine.setCurrentIndex(max(0, self.engine.findData(engine)))
        for name, box in self.options.items():
            box.setChecked(name in options)
        self._enable()
        self.blockSignals(False)

    def _engine_changed(self) -> None:
        if self.engine.currentData() not in (AUTO_ENGINE, "io_uring"):
            for box in self.options.values():  # io_uring's options go with io_uring only
                box.blockSignals(True)
                box.setChecked(False)
                box.blockSignals(False)
        self._enable()
        self.changed.emit()

    def _enable(self) -> None:
        uring = self.engine.currentData() in (AUTO_ENGINE, "io_uring")
        for box in self.options.values():
            box.setEnabled(uring)

"""Issue 38/39: the SNIA PTS is Linux's (a raw device of the machine Fiometer runs on, purged by blkdiscard,
its facts from sysfs). Where Fiometer runs on Windows or macOS, Test Setup's PTS box says so in words and
offers no Linux device name to fill in; the window and `fiometer pts` refuse it there with the same words,
before anything is touched (app.engine.devices.device_facts.unsupported_reason)."""

from __future__ import annotations

import platform

import pytest
from PySide6.QtWidgets import QComboBox, QLineEdit, QSpinBox

from app.cli.entry import main
from app.engine.devices.device_facts import unsupported_reason
from app.model.pts import PtsSetup
from app.ui.plan.pts_box import PtsBox

ELSEWHERE = ("Windows", "Darwin")


def fields(box: PtsBox) -> list:
    out = [box.device, box.test, box.variant, box.rounds_max, box.round_time, box.purge, box.stimuli]
    assert len(box.findChildren(QComboBox)) + len(box.findChildren(QSpinBox)) + 1 == len(out)  # all of them
    assert isinstance(box.device, QLineEdit)
    return out


@pytest.mark.parametrize("os_name", ELSEWHERE)
def test_the_box_says_the_pts_needs_linux_where_fiometer_does_not_run_on_it(qtbot, os_name: str) -> None:
    box = PtsBox(os_name=os_name)
    qtbot.addWidget(box)
    box.show()
    qtbot.waitExposed(box)
    words = box.why_not.text()
    assert box.why_not.isVisible() and words == unsupported_reason(os_name)
    assert "needs Linux" in words and os_name in words and "blkdiscard" in words
    assert "/dev/" not in box.device.placeholderText()  # no Linux device name offered on Windows or macOS
    assert not box.start.isEnabled() and box.start.toolTip() == words
    assert not any(w.isEnabled() for w in fields(box))


def test_on_linux_the_box_offers_the_pts(qtbot) -> None:
    box = PtsBox(os_name="Linux")
    qtbot.addWidget(box)
    box.show()
    qtbot.waitExposed(box)
    assert unsupported_reason("Linux") == "" and not box.why_not.isVisible()
    assert box.device.placeholderText() == "/dev/nvme1n1"
    assert box.start.isEnabled() and all(w.isEnabled() for w in fields(box))


def test_the_window_box_follows_the_system_it_runs_on(window) -> None:
    box = window.setup_tab.pts_box
    assert box.not_here == unsupported_reason(platform.system())
    assert box.start.isEnabled() == (platform.system() == "Linux")


@pytest.mark.parametrize("os_name", ELSEWHERE)
def test_the_window_and_the_cli_refuse_the_pts_elsewhere_in_the_same_words(
    window, dialogs, monkeypatch, capsys, tmp_path, os_name: str
) -> None:
    img = tmp_path / "device.img"
    img.write_bytes(b"\1" * 4096)
    monkeypatch.setattr(platform, "system", lambda: os_name)
    started = window.run_control.start_pts(PtsSetup(target=str(img), test="iops", purge="blkdiscard"))
    assert started is False and not window.controller.running
    assert dialogs.problems[-1] == ("The SNIA PTS needs Linux", unsupported_reason(os_name))
    code = main(["pts", str(img), "--test", "iops", "--purge", "blkdiscard", "--allow-write", str(img)])
    err = capsys.readouterr().err
    assert code != 0 and unsupported_reason(os_name) in " ".join(err.split()), err
    assert img.read_bytes() == b"\1" * 4096  # nothing written

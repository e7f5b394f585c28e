"""Test Setup's SNIA PTS choice (app.ui.plan.pts_box): the window runs a PTS test on a real loop device (a
sparse file), asks to arm it, purges it by blkdiscard, says each round and the steady-state decision in the
messages as they run, and stores the run with its PTS record; a device that is not one is refused."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.loop_disk import NEEDS_LOOP, attach, detach

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio"),
    pytest.mark.skipif(shutil.which("blkdiscard") is None, reason="needs blkdiscard"),
    NEEDS_LOOP,
]


def test_test_setup_runs_a_pts_test_and_says_its_rounds(window, qtbot, tmp_path, dialogs):
    dev = attach(tmp_path / "pts.img", 32 << 20)
    try:
        asked = []
        window.run_control.arm_writes = lambda risks: asked.append(risks) or True  # type: ignore[method-assign]
        box = window.setup_tab.pts_box
        box.device.setText(dev)
        box.test.setCurrentIndex(box.test.findData("wsat"))  # no preconditioning: every round runs
        box.variant.setCurrentIndex(box.variant.findData("client"))
        box.rounds_max.setValue(5)
        box.round_time.setValue(1)
        box.purge.setCurrentIndex(box.purge.findData("blkdiscard"))
        box.stimuli.setCurrentIndex(box.stimuli.findData("tracking"))
        with qtbot.waitSignal(window.controller.finished, timeout=120000) as finished:
            box.start.click()
        assert finished.args == ["complete"], dialogs.problems
        assert asked and asked[0][0].path == dev  # the device was armed by the user, not assumed
        lines = [window.messages.item(i).text() for i in range(window.messages.count())]
        rounds = [x for x in lines if "round " in x and "4 KiB random write IOPS" in x]
        assert len(rounds) == 5 and "Steady state" in rounds[-1], lines
        assert any(f"Purge: blkdiscard {dev} purged" in x for x in lines), lines
        assert [r for r, _ in box.rounds] == [1, 2, 3, 4, 5] and all(v > 0 for _, v in box.rounds)
        xs, ys = box.curve.getData()
        assert list(xs) == [1, 2, 3, 4, 5] and list(ys) == [v for _, v in box.rounds]  # plotted as it went
        assert not box.plot.isHidden() and box.verdict.text().startswith("round 5: 4 KiB random write IOPS")
        window.tabs.setCurrentIndex(
            next(i for i in range(window.tabs.count()) if window.tabs.tabText(i) == "Test Setup")
        )
        qtbot.wait(100)
        shot = tmp_path / "setup-pts.png"
        assert box.grab().save(str(shot))
        print(f"screenshot: {shot}")
        run_id = window.controller.run_end.run_id
        with closing(sqlite3.connect(os.environ["FIOMETER_DB"])) as c:
            host = json.loads(c.execute("SELECT host_json FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
        rec = host["pts"]
        assert rec["test"] == "wsat" and rec["variant"] == "client" and len(rec["rounds"]) == 5
        assert rec["settings"]["round_time_s"] == 1 and rec["purge"]["outcome"] == "purged"
    finally:
        detach(dev)


def test_a_path_that_is_not_a_device_is_refused(window, tmp_path, dialogs):
    f = tmp_path / "file.img"
    f.write_bytes(b"\0" * 4096)
    box = window.setup_tab.pts_box
    box.device.setText(str(f))
    box.start.click()
    assert not window.controller.running
    assert dialogs.problems and "the PTS tests a raw block device" in dialogs.problems[-1][1]
    assert Path(f).read_bytes() == b"\0" * 4096

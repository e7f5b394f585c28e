"""The small, OS-specific and pure parts of LocalFio (the process itself: tests/integration)."""

import signal

import pytest

from app.engine.transports.local_fio import (
    finish_event,
    popen_options,
    status_interval_arg,
    stop_signal,
    watchdog_seconds,
)


def test_windows_gets_its_own_process_group_and_ctrl_break():
    assert popen_options("Windows") == {"creationflags": 0x00000200}  # CREATE_NEW_PROCESS_GROUP
    assert stop_signal("Windows") == 1  # CTRL_BREAK_EVENT


def test_posix_gets_its_own_session_and_sigint():
    linux = popen_options("Linux")
    assert linux["start_new_session"] is True and linux["restore_signals"] is False
    assert callable(linux["preexec_fn"])  # fio is sent SIGTERM if Fiometer dies
    assert popen_options("Darwin") == {"start_new_session": True, "restore_signals": False}
    assert stop_signal("Linux") == signal.SIGINT


def test_status_interval_argument():
    assert status_interval_arg(1.0) == "1"
    assert status_interval_arg(2) == "2"
    assert status_interval_arg(0.25) == "250ms"
    assert status_interval_arg(1.5) == "1500ms"
    with pytest.raises(ValueError):
        status_interval_arg(0)


def test_watchdog_default_and_override():
    assert watchdog_seconds(1.0, None) == 10.0
    assert watchdog_seconds(3.0, None) == 15.0
    assert watchdog_seconds(1.0, 2.5) == 2.5


@pytest.mark.parametrize(
    "rc,kw,ok,stopped,reason",
    [
        (0, {}, True, False, ""),
        (0, {"stop_requested": True}, True, True, ""),
        (128, {"stop_requested": True}, True, True, ""),
        (
            128,
            {},
            False,
            False,
            "fio was interrupted from outside Fiometer (SIGINT/SIGTERM); its numbers so far are kept",
        ),
        (-9, {}, False, False, "fio was killed (signal 9) mid-step; samples so far are kept"),
        (
            -9,
            {"aborted": True},
            False,
            False,
            "the step was aborted: fio was killed; samples so far are kept",
        ),
        (-9, {"watchdog_after": 12.5}, False, False, "fio stopped reporting for 12.5 s and was stopped"),
        (
            -9,
            {"watchdog_after": 30.0, "got_documents": False},
            False,
            False,
            "fio printed no report within 30 s of starting and was stopped",
        ),
        (
            1,
            {"first_error": "cannot open target /x: Permission denied"},
            False,
            False,
            "fio failed (exit code 1): cannot open target /x: Permission denied",
        ),
        (1, {}, False, False, "fio failed with exit code 1"),
        (0, {"got_documents": False}, False, False, "fio ended without reporting any numbers"),
    ],
)
def test_finish_event(rc, kw, ok, stopped, reason):
    f = finish_event("m", rc, **kw)
    assert (f.manager, f.ok, f.stopped, f.reason, f.returncode) == ("m", ok, stopped, reason, rc)

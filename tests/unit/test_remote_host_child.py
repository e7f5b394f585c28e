"""The remote host's child: how it is started on each OS (Windows cannot run here), and its message framing."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

import app
from app.engine.transports.remote_host import BELOW_NORMAL_PRIORITY_CLASS, CREATE_NO_WINDOW, child_command
from app.engine.transports.remote_host_child import read_message, write_message
from app.engine.transports.transport import UNREACHABLE, Finished, Message, Snapshot


def test_from_source_python_runs_the_module_and_finds_this_package():
    argv, kwargs = child_command("Linux", False, "/venv/bin/python")
    assert argv == ["/venv/bin/python", "-m", "app.engine.transports.remote_host_child"]
    root = str(Path(app.__file__).resolve().parent.parent)
    assert kwargs["env"]["PYTHONPATH"].split(os.pathsep)[0] == root
    assert "creationflags" not in kwargs  # the child nices itself


def test_a_packaged_app_runs_itself_and_windows_uses_its_console_twin_below_normal_without_a_window():
    assert child_command("Linux", True, "/opt/fiometer/fiometer") == (
        ["/opt/fiometer/fiometer", "--remote-host"],
        {},
    )
    argv, kwargs = child_command("Windows", True, r"C:\Program Files\Fiometer\fiometer.exe")
    assert Path(argv[0]).name == "fiometer-cli.exe" and argv[1:] == ["--remote-host"]
    assert kwargs == {"creationflags": BELOW_NORMAL_PRIORITY_CLASS | CREATE_NO_WINDOW}
    assert (BELOW_NORMAL_PRIORITY_CLASS, CREATE_NO_WINDOW) == (0x4000, 0x08000000)  # winbase.h
    argv, kwargs = child_command("Windows", False, r"C:\Python311\python.exe")
    assert (
        argv[1:] == ["-m", "app.engine.transports.remote_host_child"]
        and kwargs["creationflags"] == 0x08004000
    )


def test_messages_round_trip_and_a_cut_pipe_is_the_end():
    stream = io.BytesIO()
    snap = Snapshot(
        "M1",
        12.5,
        [{"jobname": "w1", "read": {"io_bytes": 4096, "clat_ns": {"bins": {"1000": 3}}}}],
        final=True,
        raw='{"jobs": []}',
    )
    write_message(stream, ("event", "7", snap, (4096, 12.0, 1.7e9, None)))
    write_message(stream, ("event", "7", Finished("M1", True), (4096, 12.0, 1.7e9, "2 messages not kept")))
    note = Message("M1", "manager M1 is unreachable (…)", "warning", UNREACHABLE)
    write_message(stream, ("event", "7", note, (4096, 12.0, 1.7e9, None)))
    whole = stream.getvalue()
    stream.seek(0)
    assert read_message(stream) == ("event", "7", snap, (4096, 12.0, 1.7e9, None))
    assert read_message(stream)[2] == Finished("M1", True)
    assert read_message(stream)[2].kind == UNREACHABLE  # (a liveness note is summarised by its kind)
    with pytest.raises(EOFError):
        read_message(stream)
    with pytest.raises(EOFError):  # the other side died in the middle of a message
        read_message(io.BytesIO(whole[:20]))


def test_a_hosted_remote_pushes_its_events_in_order_once_asked():
    """The runner takes a hosted remote's events without a thread of its own (push_to): what came
    before goes first, then each event as the host's reader hands it on, Finished last."""
    from app.engine.transports.remote_host import HostedRemote
    from app.engine.transports.transport import Finished, Message, PushesEvents

    t = HostedRemote(None, "1", ("127.0.0.1", 1), "M1")  # type: ignore[arg-type]  (no host needed here)
    assert isinstance(t, PushesEvents)
    t._loaded(1.0)  # its job was accepted
    status = (10, 1.0, None, None, 1.0, 1.0, False, False)
    t._event(Message("M1", "first"), status)
    got: list = []
    t.push_to(got.append)
    t._event(Message("M1", "second"), status)
    t._lost("the reader ended")
    t._lost("told once")
    assert [(n, getattr(ev, "text", None) or getattr(ev, "reason", None)) for n, ev in got] == [
        ("M1", "first"),
        ("M1", "second"),
        ("M1", "the reader ended"),
    ]
    assert isinstance(got[-1][1], Finished) and t.bytes_received == 10

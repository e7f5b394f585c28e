import pytest

from app.engine.transports.fio_messages import translate
from tests.fio_fixtures import stderr, stdout


def lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]


def test_bad_option_recording():
    got = [translate(x) for x in lines(stderr("bad_option"))]
    assert [t.text for t in got] == [
        "fio rejected option bogus_option=1 in the job file",
        "(fio suggests option log_prio instead)",
        "fio dropped job bad because of the error above",
    ]
    assert [t.level for t in got] == ["error", "info", "error"]


def test_engine_not_loadable_recording():
    got = [translate(x).text for x in lines(stderr("bad_engine")) + lines(stdout("bad_engine").decode())]
    assert got[0] == "fio cannot load the I/O engine doesnotexist on this machine"
    assert got[2].startswith("fio cannot load an I/O engine library: doesnotexist: cannot open shared object")


def test_open_failure_recording():
    line = lines(stdout("locked").decode())[0]
    t = translate(line)
    assert t.level == "error"
    assert t.text.startswith("cannot open target /tmp/")
    assert t.text.endswith("/locked.dat: Operation not permitted")


def test_directory_target_recording():
    t = translate(lines(stderr("dir_target"))[0])
    assert t.text == "a target is a directory, not a file (Is a directory); give a file name inside it"


@pytest.mark.parametrize(
    "line,expected",
    [
        ("fio: terminating on signal 2", "fio is ending its jobs (signal 2)"),
        (
            "m: you need to specify size=",
            "job m: the target does not exist yet, so fio needs a size (size=) to create it",
        ),
        (
            "fio: pid=0, err=22/file:filesetup.c:1155, func=total_file_size, error=Invalid argument",
            "fio cannot find the size of a target: Invalid argument",
        ),
        (
            "fio: io_u error on file /tmp/x.dat: Invalid argument: read offset=4096, buflen=4",
            "I/O error on target /tmp/x.dat: Invalid argument (read of 4 bytes at offset 4096)",
        ),
        (
            "fio: pid=5163, err=22/file:io_u.c:1876, func=io_u error, error=Invalid argument",
            "an I/O failed and its job stopped: Invalid argument (error 22)",
        ),
        (
            "fio: pid=9, err=2/file:filesetup.c:805, func=open(/a (b)/c.dat), error=No such file or directory",
            "cannot open target /a (b)/c.dat: No such file or directory",
        ),
        (
            "fio: pid=9, err=95/file:engines/io_uring.c:1, func=io_queue_init, error=Operation not supported",
            "a fio job failed in io_queue_init: Operation not supported (error 95)",
        ),
    ],
)
def test_known_messages(line, expected):
    assert translate(line).text == expected


def test_unknown_text_is_kept_as_a_warning():
    t = translate("  fio: something new in 3.99  ")
    assert (t.text, t.level, t.kind) == ("fio: something new in 3.99", "warning", "other")

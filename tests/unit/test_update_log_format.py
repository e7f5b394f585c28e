"""The pieces of Iometer's per-update file that need no fio (the whole file: integration/test_update_log_written)."""

from __future__ import annotations

import errno
from pathlib import Path

from app.analysis.iometer_update_log import IometerUpdateLog, stream_number, update_log_path


def test_the_file_sits_beside_the_results_file_named_inst_plus_its_name():
    assert update_log_path(Path("out") / "results.csv") == Path("out") / "instresults.csv"
    assert update_log_path("run 7.csv") == Path("instrun 7.csv")


def test_numbers_are_written_as_iometers_stream_writes_them():
    """Iometer 1.1.0's per-update rows: 6 significant digits, MSVC's three-digit exponent (``3.91406e+006``)."""
    assert stream_number("3914062.500000") == "3.91406e+006"
    assert stream_number("953.094000") == "953.094"
    assert stream_number("0.000061") == "6.1e-005"
    assert stream_number("0.000000") == "0"
    assert stream_number("1015830") == "1015830" and stream_number("") == "" and stream_number("-1") == "-1"


class _FullDisk:
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_write_fault_is_said_once_and_nothing_more_is_attempted(tmp_path):
    said: list[OSError] = []
    log = IometerUpdateLog(tmp_path / "instresults.csv", on_error=said.append)
    log.open()
    log.close()
    log._file = _FullDisk()  # type: ignore[assignment]  # a disk that filled up during the run
    log._write(["'Results"])
    log._write(["'Time Stamp"])
    assert len(said) == 1 and said[0].errno == errno.ENOSPC and log.failure is said[0]
    assert log._file is None

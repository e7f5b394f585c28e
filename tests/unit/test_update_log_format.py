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


def test_updates_are_counted_by_time_stamp_however_reports_were_batched(tmp_path):
    """The runner hands reports on in batches: two managers' reports of one second may come in two batches,
    and one batch may hold two seconds. Iometer's count is of updates, one per time stamp."""
    from datetime import datetime

    from app.engine.sampling.telemetry import Sample
    from app.model.metrics import Metrics

    def at(manager: str, t: float) -> Sample:
        m = Metrics(seconds=1.0, read_ios=100, read_iops=100.0)
        return Sample(manager, "target", "t1", t, m, m, False, worker="w1")

    log = IometerUpdateLog(tmp_path / "instresults.csv", now=lambda: datetime(2026, 11, 27, 12, 0, 0))
    batches = [[at("M1", 1.0)], [at("M2", 1.0)], [at("M1", 2.0)], [at("M2", 2.0)]]  # one second, two batches
    batches.append([at("M1", 3.0), at("M2", 3.0), at("M1", 4.0), at("M2", 4.0)])  # two seconds, one batch
    for batch in batches:
        log.samples(None, batch)  # type: ignore[arg-type]  # (the step is not read)
    log.close()
    assert log.updates_written == 4  # (5 batches)

"""The CLI's live line: three significant digits, no "0.000 ms" without completions, no "19s/14s"."""

from __future__ import annotations

from app.cli.progress import brief
from app.model.metrics import Metrics


def test_numbers_have_three_significant_digits():
    m = Metrics(
        seconds=1.0,
        read_ios=12345,
        read_bytes=12345 * 4096,
        read_iops=12345.0,
        read_bps=12345 * 4096.0,
        read_lat_sum_ns=12345 * 81_234,
        read_lat_n=12345,
    )
    assert brief(m) == "12,345 IOPS 50.6 MB/s 0.0812 ms"


def test_bytes_without_completions_show_dashes_not_zeros():
    m = Metrics(seconds=1.0, write_bytes=139_810_000, write_bps=139_810_000.0)
    assert brief(m) == "- IOPS 140 MB/s - ms"

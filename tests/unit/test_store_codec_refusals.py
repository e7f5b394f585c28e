"""The store's codec refuses what it cannot hold and answers nothing for nothing: negative histogram buckets
or counts, an empty or ragged block, a blob of another format, no series asked for, a series without samples.
With the round-trip tests these hold app/store/codec.py, blocks.py and hist_blocks.py at 100 % line coverage
(pinned in .ci/coverage-floor.txt)."""

from __future__ import annotations

import numpy as np
import pytest

from app.store import open_store
from app.store.blocks import (
    BLOCK_COLUMNS,
    decode_block,
    encode_block,
    series_arrays,
    series_arrays_between,
    series_span,
)
from app.store.codec import decode_hist, encode_hist
from app.store.hist_blocks import decode_hist_block, encode_hist_block, summaries

ROW = tuple([1.0] + [0] * (len(BLOCK_COLUMNS) - 1))


@pytest.mark.parametrize("hist", [{-4: 1}, {4: -1}, {4: 2, 8: -3}])
def test_a_histogram_with_a_negative_bucket_or_count_is_refused(hist):
    with pytest.raises(ValueError, match="negative buckets or counts"):
        encode_hist(hist)


def test_an_empty_histogram_is_kept_as_nothing_and_a_large_one_reads_back():
    assert encode_hist({}) is None
    big = {1000: 1, 2**40: 2**33}  # past 32 bits: the 64-bit form
    assert decode_hist(encode_hist(big)) == big


@pytest.mark.parametrize("rows", [[], [ROW[:-1]], [ROW, (*ROW, 0)]], ids=["no rows", "short", "long"])
def test_a_block_of_no_rows_or_of_rows_of_the_wrong_width_is_refused(rows):
    with pytest.raises(ValueError, match=f"rows of {len(BLOCK_COLUMNS)} values"):
        encode_block(rows)


@pytest.mark.parametrize("blob", [b"", b"\xff" + encode_block([ROW])[1:]], ids=["empty", "other format"])
def test_a_sample_block_of_another_format_is_refused(blob):
    with pytest.raises(ValueError, match="not a sample block"):
        decode_block(blob)


@pytest.mark.parametrize("blob", [b"", b"\xff\x00"], ids=["empty", "other format"])
def test_a_histogram_block_of_another_format_is_refused(blob):
    with pytest.raises(ValueError, match="not a histogram block"):
        decode_hist_block(blob)


def test_a_histogram_block_of_no_interval_is_refused():
    with pytest.raises(ValueError, match="one interval or more"):
        encode_hist_block([])


def test_no_series_asked_for_and_series_without_samples_answer_nothing(tmp_path):
    store = open_store(tmp_path / "r.db")
    try:
        with store.read("reading nothing") as conn:
            assert series_arrays(conn, []) == {}
            assert series_arrays_between(conn, [], 0.0, 10.0) == {}
            assert series_span(conn, []) is None
            assert summaries(conn, []) == {}
            # ids of series that hold no samples (or do not exist): absent, not empty arrays
            assert series_arrays_between(conn, [1, 2], 0.0, 10.0) == {}
            assert series_span(conn, [1, 2]) is None
    finally:
        store.close()


def test_a_block_read_back_keeps_ints_and_floats_apart():
    cols = decode_block(encode_block([ROW, tuple([2.5] + [7] * (len(BLOCK_COLUMNS) - 1))]))
    assert cols[0].dtype == np.float64 and cols[0].tolist() == [1.0, 2.5]
    assert cols[1].dtype == np.int64 and cols[1].tolist() == [0, 7]

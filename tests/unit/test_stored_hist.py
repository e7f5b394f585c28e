"""Stored histograms read later (codec.StoredHist, a report's data sheet and CSV): the percentiles taken from
their arrays are fio's rule on the merged histogram, the very values the dicts give, for every shape."""

from __future__ import annotations

import random

import pytest

from app.model.metrics import Metrics, hist_percentiles, merged_hist
from app.report.latency import PERCENTILES
from app.store.codec import StoredHist, decode_hist, encode_hist

PCTS = [0.0, 1.0, *PERCENTILES, 100.0]


def shapes():
    rng = random.Random(40)
    yield "one bucket each, the same", {1000: 5}, {1000: 7}
    yield "disjoint", {10: 1, 20: 2}, {30: 3, 40: 4}
    yield "interleaved", {10: 1, 30: 2, 50: 3}, {20: 4, 40: 5, 60: 6}
    yield "read only", {5: 1, 6: 1}, {}
    yield "write only", {}, {7: 9}
    yield "zero counts among them", {1: 0, 2: 5, 3: 0}, {2: 0, 4: 1}
    yield "a 64-bit bucket", {2**40: 3}, {2**40: 1, 2**41: 1}
    yield "huge counts", {100: 2**40, 200: 1}, {150: 2**40}
    for i in range(20):
        keys = sorted(rng.sample(range(1, 5000), 300))
        read = {k: rng.randint(0, 1000) for k in keys[:200]}
        write = {k: rng.randint(0, 1000) for k in keys[100:]}
        yield f"random {i}", read, write


@pytest.mark.parametrize(
    ("name", "read", "write"), list(shapes()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_percentiles_from_the_arrays_are_those_of_the_merged_dicts(name, read, write):
    want = [None if v is None else v / 1e6 for v in hist_percentiles(merged_hist([read, write]), PCTS)]
    later = Metrics(
        read_hist=StoredHist(encode_hist(read)) if read else {},
        write_hist=StoredHist(encode_hist(write)) if write else {},
    )
    assert later.percentiles_ms(PCTS) == want
    assert Metrics(read_hist=read, write_hist=write).percentiles_ms(PCTS) == want


def test_all_zero_counts_have_no_percentile():
    later = Metrics(read_hist=StoredHist(encode_hist({1: 0, 2: 0})))
    assert later.percentiles_ms(PCTS) == [None] * len(PCTS)


def test_a_stored_histogram_reads_as_the_dict_it_decodes_to():
    blob = encode_hist({3: 1, 9: 4})
    h = StoredHist(blob)
    assert bool(h) and len(h) == 2 and h == {3: 1, 9: 4} == decode_hist(blob) and h[9] == 4
    assert dict(h.items()) == {3: 1, 9: 4} and sorted(h) == [3, 9]
    assert not StoredHist("[]") and StoredHist("[3, 1, 6, 4]") == {3: 1, 9: 4}  # version 2's JSON text
    assert repr(h) == "StoredHist({3: 1, 9: 4})"  # what a failing comparison or a log shows: the buckets

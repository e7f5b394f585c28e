"""A latency histogram kept as numpy count arrays over fio's buckets, read as a mapping when asked."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping

import numpy as np


class BucketHist(Mapping[int, int]):
    """A read-only latency histogram (bucket value in ns -> count) kept as numpy arrays and turned
    into a dict only when first read. Most per-job histograms of live samples are never read (the
    store keeps sample histograms for manager and ALL rows, the charts show ALL, managers and
    workers), and building ~300-entry dicts for every job twice a second dominated the cost of an
    interval with hundreds of jobs."""

    __slots__ = ("_values", "_counts", "_dict")

    def __init__(self, values: np.ndarray, counts: np.ndarray) -> None:
        self._values, self._counts = values, counts
        self._dict: dict[int, int] | None = None

    def _d(self) -> dict[int, int]:
        if self._dict is None:
            nz = self._counts.nonzero()[0]
            self._dict = dict(zip(self._values[nz].tolist(), self._counts[nz].tolist(), strict=True))
        return self._dict

    def __getitem__(self, key: int) -> int:
        return self._d()[key]

    def bucket_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(bucket values ns, counts) over all of fio's buckets: percentiles without building dicts."""
        return self._values, self._counts

    def __iter__(self) -> Iterator[int]:
        return iter(self._d())

    def items(
        self,
    ) -> ItemsView[
        int, int
    ]:  # (Mapping's default looks every key up again: merging many managers' histograms)
        return self._d().items()

    def __len__(self) -> int:
        return len(self._d())

    def __repr__(self) -> str:
        return f"BucketHist({self._d()!r})"

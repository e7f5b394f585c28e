"""Every time in the store is UTC ISO 8601 text with milliseconds, e.g. 2026-05-09T07:35:25.123+00:00."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("store times must be timezone-aware")
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def utc_now() -> str:
    return iso(datetime.now(UTC))

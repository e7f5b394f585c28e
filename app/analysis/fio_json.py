"""fio's stored JSON output read as a document: orjson (3-5 times json's speed on a 64-job json+ output, which a
report of a long run reads for every step), json where orjson refuses what json reads (NaN, Infinity, integers
past 64 bits)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def fio_document(raw: str | None) -> dict[str, Any] | None:
    """The output as a JSON object, or None when it is none (empty, damaged, nested past the limit)."""
    try:
        doc = orjson.loads(raw or "")
    except orjson.JSONDecodeError:
        try:
            doc = json.loads(raw or "")
        except (ValueError, RecursionError):
            return None
    return doc if isinstance(doc, dict) else None

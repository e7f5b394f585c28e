"""The one exception the store raises; its str() is a message for the user, never a traceback."""

from __future__ import annotations


class StoreError(Exception):
    """Something about the results database the user must know; str() says where, what and what to do."""


class RunNotFound(StoreError):
    """No run with that id (it may have been deleted by another Fiometer window)."""

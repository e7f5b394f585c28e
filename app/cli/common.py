"""What the `fiometer` subcommands share: the user-facing error, opening plans and the store, sizes."""

from __future__ import annotations

import argparse
from pathlib import Path


class CliError(Exception):
    """A user-facing failure: printed without a traceback, exit code 2."""


def parse_pairs(items: list[str] | None, option: str, shape: str, example: str) -> dict[str, str]:
    """Repeated ``--option NAME=VALUE`` arguments; a malformed one is named, with the shape and an example."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise CliError(f"{option} {item!r}: expected {shape}, e.g. {option} '{example}'")
        out[name] = value
    return out


def _parse_map(items: list[str] | None) -> dict[str, str]:
    return parse_pairs(items, "--map", "NAME=PATH", "C:=/tmp/iobw.tst")


def _expand(plan):
    from app.engine.sequence import SequenceTooLong, expand

    try:
        return expand(plan)
    except SequenceTooLong as e:
        raise CliError(str(e)) from e


def _open(path: str):
    from app.model.opening import PlanOpenError, open_plan

    if not Path(path).exists():
        raise CliError(f"{path}: no such file")
    try:
        return open_plan(path)
    except PlanOpenError as e:
        raise CliError(str(e)) from e


def parse_size(text: str) -> int:
    """'64M', '1g', '4096', '512k' -> bytes (binary units, as fio reads them)."""
    from app.model.units import parse_size as parse

    value = parse(text)
    if value is None:
        raise CliError(f"size {text!r}: expected a number with an optional K, M, G or T suffix, e.g. 64M")
    return value


def _store(args: argparse.Namespace):
    from app.store.database import open_store
    from app.store.errors import StoreError

    try:
        return open_store(getattr(args, "db", None))
    except StoreError as e:
        raise CliError(str(e)) from e


def _get_run(args: argparse.Namespace, **query):
    """The run ``args.run`` (``query``: get_run's options, e.g. raw_output=True), or a CliError."""
    from app.store.errors import RunNotFound
    from app.store.queries import get_run

    store = _store(args)
    try:
        return get_run(store, args.run, **query)
    except RunNotFound as e:
        raise CliError(str(e)) from e
    finally:
        store.close()

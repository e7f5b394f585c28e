"""What the `fiometer` subcommands share: the user-facing error, opening plans and the store, sizes."""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

# Exit codes of `fiometer` (the user guide lists them; keep both in step).
EXIT_OK = 0  # done; a run whose every step completed
EXIT_FAILED = 1  # a run with a failed step (or that could not finish), doctor without fio, a failed --smoke
EXIT_INPUT = 2  # bad input: options, plan files, refused runs (nothing ran)
EXIT_STOPPED = 3  # a run stopped by the user (Ctrl-C); the steps that ran are kept
EXIT_STORE = 4  # the results database failed; what was recorded before is kept
EXIT_INTERNAL = 5  # an unexpected error; its traceback is in the log file named on screen
EXIT_INTERRUPTED = 130  # Ctrl-C outside a run


class CliError(Exception):
    """A user-facing failure: printed without a traceback, exit code ``code`` (2: bad input)."""

    def __init__(self, message: str, code: int = EXIT_INPUT):
        super().__init__(message)
        self.code = code


def number_option(kind: type, low: float, high: float, unit: str = ""):
    """An argparse ``type=``: a number of ``kind`` (int or float) in [low, high]; anything else is a usage
    error naming the range (a negative run time would otherwise run without end)."""
    what = "a whole number" if kind is int else "a number"
    suffix = f" {unit}" if unit else ""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"{text!r}: must be from {low:g} to {high:g}{suffix}")
        return value

    parse.__name__ = "number"  # argparse names the type in its messages
    return parse


def seconds_option(low: int = 0):
    """Whole seconds, ``low`` to a plan's own maximum run time."""
    from app.model.validation import MAX_SECONDS

    return number_option(int, low, MAX_SECONDS, "seconds")


# --- terminal output: control characters from files are shown escaped, never sent raw ----------------
_KEEP = {"\n", "\t"}


def escape_controls(text: str) -> str:
    """``text`` with control and format characters (ESC, CR, BEL, bidi overrides ...) written as ``\\x1b``-style
    escapes; newlines and tabs stay. Names and messages from plan files or fio cannot move the cursor,
    rewrite earlier lines or recolour the terminal."""
    if text.isprintable():
        return text
    out = []
    for c in text:
        if c in _KEEP or c.isprintable():
            out.append(c)
        elif unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"):
            code = ord(c)
            out.append(
                f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
        else:
            out.append(c)
    return "".join(out)


class TerminalText(io.TextIOBase):
    """A text stream that escapes control characters on the way to ``stream``. ``write_control`` sends
    Fiometer's own cursor sequences (the progress line) unchanged."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(escape_controls(text))
        return len(text)

    def write_control(self, sequence: str) -> None:
        self.stream.write(sequence)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


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


def _expand(plan, warnings: list[str] | tuple[str, ...] = (), refusal: str = "the plan cannot be used"):
    """The plan's steps, after its checks: a plan with errors never reaches expansion. The refusal lists
    the reader's ``warnings`` first: they often explain the error (a value Iometer would not take ...)."""
    from app.engine.jobs.sequence import SequenceTooLong, expand
    from app.model.validation import validate

    errors = [p for p in validate(plan) if p.severity == "error"]
    if errors:
        where = f"{plan.source}: " if plan.source else ""
        lines = [*warnings, *(f"{where}{p}" for p in errors)]
        raise CliError(f"{refusal}:\n" + "\n".join(f"  {ln}" for ln in lines))
    try:
        return expand(plan)
    except SequenceTooLong as e:
        raise CliError(str(e)) from e


def _open(path: str):
    from app.model.opening import PlanOpenError, open_plan

    try:
        return open_plan(path)
    except PlanOpenError as e:
        raise CliError(str(e)) from e


MAX_SIZE = 1 << 50


def parse_size(text: str) -> int:
    """'64M', '1g', '4096', '512k' -> bytes (binary units, as fio reads them), from 4 KiB to 1 PiB."""
    from app.model.units import parse_size as parse

    value = parse(text)
    if value is None:
        raise CliError(f"size {text!r}: expected a number with an optional K, M, G or T suffix, e.g. 64M")
    if not 4096 <= value <= MAX_SIZE:
        raise CliError(f"size {text!r}: must be from 4K to 1024T")
    return value


def output_path(path: str | Path) -> Path:
    """A file the user asked Fiometer to write: its folder must exist (Fiometer does not create folders
    the user may have mistyped)."""
    out = Path(path)
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise CliError(f"{out}: the folder {folder} does not exist; create it or choose another place")
    if out.is_dir():
        raise CliError(f"{out}: is a folder; give a file name inside it")
    return out


def write_output(path: str | Path, data: bytes | str) -> Path:
    """Write a file the user asked for; a missing folder or an OS refusal is a message, not a traceback."""
    from app.safe_files import UnsafeOutput, write_file

    out = output_path(path)
    try:
        write_file(out, data)
    except UnsafeOutput as e:
        raise CliError(str(e)) from e
    except OSError as e:
        raise CliError(f"{out}: cannot be written: {e.strerror or e}") from e
    return out


def write_output_chunks(path: str | Path, chunks: Iterable[bytes]) -> Path:
    """``write_output`` for content made piece by piece: written as it comes, never whole in memory."""
    from app.safe_files import UnsafeOutput, write_chunks

    out = output_path(path)
    try:
        write_chunks(out, chunks)
    except UnsafeOutput as e:
        raise CliError(str(e)) from e
    except OSError as e:
        raise CliError(f"{out}: cannot be written: {e.strerror or e}") from e
    return out


def _store(args: argparse.Namespace, reading: bool = False):
    """The results database. ``reading``: a command that only reads it still works when the file cannot
    be written (a full disk, a read-only file): it is opened read-only, with a note on stderr."""
    import sys

    from app.store.database import open_store, open_store_readonly
    from app.store.errors import StoreError

    db = getattr(args, "db", None)
    try:
        return open_store(db)
    except StoreError as e:
        if not reading:
            raise CliError(str(e), EXIT_STORE) from e
        try:
            store, note = open_store_readonly(db)
        except StoreError:
            raise CliError(str(e), EXIT_STORE) from e
        print(f"fiometer: warning: {e} {note}", file=sys.stderr)
        return store


def _get_run(args: argparse.Namespace, **query):
    """The run ``args.run`` (``query``: get_run's options, e.g. raw_output=True), or a CliError."""
    from app.store.errors import RunNotFound
    from app.store.queries import get_run

    store = _store(args, reading=True)
    try:
        return get_run(store, args.run, **query)
    except RunNotFound as e:
        raise CliError(str(e)) from e
    finally:
        store.close()


def add_step_overrides(sp: argparse.ArgumentParser) -> None:
    """--run-time, --ramp-up and --test-file-size, as `run` takes them and `plan --jobs` writes them."""
    sp.add_argument(
        "--run-time",
        type=seconds_option(),
        metavar="S",
        help="override every step's run time (seconds; 0 = until Ctrl-C)",
    )
    sp.add_argument(
        "--ramp-up", type=seconds_option(), metavar="S", help="override every step's ramp-up (seconds)"
    )
    sp.add_argument(
        "--test-file-size", metavar="SIZE", help="size of every test file, e.g. 256M (quick checks)"
    )


@contextlib.contextmanager
def ctrl_c_stops(runner: Any) -> Iterator[None]:
    """While the block runs, Ctrl-C stops ``runner`` after its step's final numbers, a second one aborts.
    Python runs the handler on the main thread between two bytecodes of ``runner.run()``, maybe inside the
    runner's lock that stop() and abort() take, or inside a print to stdout (printing there again raised
    "reentrant call inside <_io.BufferedWriter name='<stdout>'>"): what it says and does runs on a thread of
    its own, never in the handler."""
    import signal
    import threading

    presses = 0

    def stop() -> None:
        print("\nStopping after this step's final numbers (Ctrl-C again to abort)...", flush=True)
        runner.stop()

    def on_sigint(signum: int, frame: Any) -> None:
        nonlocal presses
        presses += 1
        threading.Thread(target=stop if presses == 1 else runner.abort, daemon=True).start()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

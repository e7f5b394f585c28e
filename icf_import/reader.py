"""Reading an .icf file into an IcfDocument, for every version Iometer wrote.

Like Iometer, each section is found by scanning from the top for the first line that starts with
its header, so sections may come in any order or be missing. An error aborts only the section it
is in; the other sections still load. Nothing here raises on bad content: problems become
Diagnostics in doc.diagnostics.
"""

from __future__ import annotations

from os import PathLike

from icf_import.checks import check_assigned_specs, check_some_worker_has_a_spec
from icf_import.cursor import Context, Cursor, Fail, shown
from icf_import.document import Diagnostic, IcfDocument, IcfError, ResultsDisplay, TestSetup
from icf_import.lexer import (
    MAX_LINE,
    NEW_SPEC_FORMAT_VERSION,
    OLDEST_KNOWN_VERSION,
    decode,
    split_lines,
    trim,
    version_number,
)
from icf_import.read_managers import SpecRef, read_managers
from icf_import.read_setup import read_results_display, read_test_setup
from icf_import.read_specs import read_specs_new, read_specs_old

SECTIONS = (
    ("'test setup", "TEST SETUP"),
    ("'results display", "RESULTS DISPLAY"),
    ("'access specifications", "ACCESS SPECIFICATIONS"),
    ("'manager list", "MANAGER LIST"),
)


def parse(data: str | bytes, source: str = "<string>") -> IcfDocument:
    """The document a file's text (or bytes: UTF-8 with or without BOM, else cp1252) describes."""
    text = decode(data) if isinstance(data, bytes | bytearray) else data.removeprefix("\ufeff")
    cur = Cursor(split_lines(text))
    doc = IcfDocument(source=source)
    ctx = Context(source, None)
    _read_version(cur, doc, ctx)
    for i, line in enumerate(cur.raw):
        if len(line) > MAX_LINE:
            ctx.warn(i + 1, f"line is {len(line)} characters long; Iometer reads at most {MAX_LINE} per line")
    starts = _find_sections(cur, ctx)
    if cur.count and not starts and not _has_version_line(cur):
        ctx.diagnostics.clear()
        ctx.error(
            1,
            f"not an Iometer configuration file: its first line is not 'Version <version>' and it has "
            f"none of Iometer's sections ({', '.join(repr(h[1:].title()) for h, _ in SECTIONS)}); "
            "open an .icf saved by Iometer (File > Save Configuration) or a Fiometer plan",
        )
        doc.diagnostics = list(ctx.diagnostics)
        return doc
    refs: list[SpecRef] = []
    failed: set[str] = set()
    for title, start in starts.items():
        cur.pos = start + 1
        try:
            _read_section(title, cur, doc, refs, ctx)
        except Fail as f:
            ctx.error(f.line, f.message)
            failed.add(title)
        except Exception as e:  # a reader bug must not make a bad file crash the caller
            ctx.error(start + 1, f"internal error while reading {title}: {e!r}")
            failed.add(title)
    if not failed & {"ACCESS SPECIFICATIONS", "MANAGER LIST"}:  # no follow-on errors from a half-read section
        check_assigned_specs(doc, refs, ctx)
        check_some_worker_has_a_spec(doc, ctx)
    doc.diagnostics = sorted(ctx.diagnostics, key=lambda d: d.line)
    return doc


def load(path: str | PathLike[str]) -> IcfDocument:
    """Reads a file's bytes and parses them; an unreadable file raises IcfError (line 0)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        reason = e.strerror or str(e)
        raise IcfError([Diagnostic("error", str(path), 0, f"cannot read the file: {reason}")]) from e
    return parse(data, str(path))


def load_strict(path: str | PathLike[str]) -> IcfDocument:
    """load(), raising IcfError with the error diagnostics when the file has any."""
    doc = load(path)
    if doc.errors:
        raise IcfError(doc.errors)
    return doc


def _read_section(title: str, cur: Cursor, doc: IcfDocument, refs: list[SpecRef], ctx: Context) -> None:
    """Creates the section's object first, so what was read before an error stays in the document."""
    if title == "TEST SETUP":
        doc.test_setup = TestSetup()
        read_test_setup(cur, doc.test_setup, ctx)
    elif title == "RESULTS DISPLAY":
        doc.results_display = ResultsDisplay()
        read_results_display(cur, doc.results_display, ctx)
    elif title == "ACCESS SPECIFICATIONS":
        doc.access_specs = []
        if doc.spec_format == "old":
            read_specs_old(cur, doc.access_specs, ctx)
        else:
            read_specs_new(cur, doc.access_specs, ctx)
    else:
        doc.managers = []
        read_managers(cur, doc.managers, refs, ctx)


def _read_version(cur: Cursor, doc: IcfDocument, ctx: Context) -> None:
    """First line: 'Version <ver> '. Sets doc.version, doc.spec_format and ctx.version."""
    expected = "'Version <version>' on the first line (e.g. 'Version 1.1.0' or 'Version 2006.07.27')"
    if cur.count == 0:
        doc.version = ""
        ctx.error(0, f"the file is empty; expected {expected}")
        return
    first = cur.text[0]
    has_word = first[:7].lower() == "version"
    doc.version = trim(first[7:]) if has_word else first
    ctx.version = version_number(first)
    if ctx.version is None:
        ctx.error(1, f"expected {expected}, found {shown(first)}")
    elif not has_word:
        ctx.warn(1, f"expected {expected}, found {shown(first)}; read as version {doc.version}")
    elif ctx.version < OLDEST_KNOWN_VERSION:
        ctx.warn(1, f"version {doc.version} is older than 1998.01.05; Iometer warns and reads it anyway")
    doc.spec_format = "old" if ctx.version_below(NEW_SPEC_FORMAT_VERSION) else "new"


def _has_version_line(cur: Cursor) -> bool:
    return cur.count > 0 and cur.text[0][:7].lower() == "version" and version_number(cur.text[0]) is not None


def looks_like_icf(data: bytes) -> bool:
    """Whether a file's content is an Iometer configuration (whatever its name): a 'Version' first line
    or one of Iometer's section headers at the start of a line."""
    cur = Cursor(split_lines(decode(data[: 1 << 20])))
    if _has_version_line(cur):
        return True
    return any(text.lower().startswith(header) for text in cur.text for header, _ in SECTIONS)


def _find_sections(cur: Cursor, ctx: Context) -> dict[str, int]:
    """SkipTo: the first line starting with each header (case-insensitive), in file order."""
    starts: dict[str, int] = {}
    for i, text in enumerate(cur.text):
        if not text.startswith("'"):
            continue
        lower = text.lower()
        for header, title in SECTIONS:
            if lower.startswith(header):
                if title in starts:
                    ctx.warn(
                        i + 1,
                        f"a second {title} section starts here; it is ignored "
                        f"(Iometer reads only the first, at line {starts[title] + 1})",
                    )
                else:
                    starts[title] = i
    return dict(sorted(starts.items(), key=lambda kv: kv[1]))

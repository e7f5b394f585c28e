"""`fiometer compare` (tables in the terminal) and `fiometer report` (HTML, PDF, XLSX, CSV files)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.cli.common import CliError, _store
from app.report.output_files import write_report_file

GROUP_HELP = (
    "a run id, or several joined by commas (3,4,5) for a group of repeated runs compared by their mean"
)


def run_group(text: str) -> list[int]:
    try:
        ids = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected run ids such as 3 or 3,4,5") from None
    if not ids or len(set(ids)) != len(ids):
        raise argparse.ArgumentTypeError(f"{text!r}: expected run ids such as 3 or 3,4,5, each once")
    return ids


def _threshold(text: str) -> float:
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage such as 5 or 2.5") from None
    if not 0 <= v < 1000:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage between 0 and 1000")
    return v


def _build(args: argparse.Namespace, candidates: list[list[int]], *, terminal: bool = False, then=None):
    """The report; ``then(report)`` writes its files while the store is still open (the data sheet and
    CSV read each step's workers and targets from it)."""
    from app.report.document import ReportMeta, build_report
    from app.store.errors import StoreError

    meta = ReportMeta(
        title=args.title,
        client=args.client,
        author=args.author,
        paper=args.paper,
        labels=args.labels or [],
        company=args.company,
        logo=args.logo or "",
    )
    if args.date:
        meta.date = args.date
    if meta.logo and not Path(meta.logo).is_file():
        raise CliError(f"--logo {meta.logo}: no such file (a PNG or JPEG image)")
    store = _store(args)
    try:
        try:
            report = build_report(
                store,
                args.run,
                candidates,
                meta,
                threshold_pct=args.threshold,
                match=args.match,
                repeats=not args.no_repeats,
                include_incomplete=args.include_incomplete,
                terminal=terminal,
            )
        except StoreError as e:
            raise CliError(f"{e} `fiometer runs` lists the stored runs.") from e
        except ValueError as e:
            raise CliError(f"--labels: {e}") from e
        if then is not None:
            then(report)
        return report
    finally:
        store.close()


def _labels(text: str) -> list[str]:
    labels = [x.strip() for x in text.split(",")]
    if not any(labels):
        raise argparse.ArgumentTypeError(f"{text!r}: expected labels such as before,after")
    return labels


# What a console that cannot show a character gets instead (Windows' cp1252 has no arrow or minus sign).
PLAIN = str.maketrans(
    {"\u2192": "->", "\u2212": "-", "\u00b1": "+/-", "\u2014": "-", "\u2013": "-", "\u2026": "..."}
)


def say(line: str) -> None:
    """Print a line as the console can show it: the minus sign as "-" always (tables align), the arrow and
    the rest in plain characters where the console's encoding lacks them, never an encoding error."""
    line = line.replace("\u2212", "-")
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        line.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        line = line.translate(PLAIN).encode(encoding, "replace").decode(encoding, "replace")
    print(line)


def cmd_compare(args: argparse.Namespace) -> int:
    from app.cli.progress import format_table
    from app.report.summary import summary_lines

    report = _build(args, args.candidates, terminal=True)
    for block in report.summary:
        say(block.heading + ":")
        for kind, s in summary_lines(block):
            if kind != "noise":
                say(("  " if kind == "what_changed" else "  - ") + s)
    if (
        report.validity
    ):  # as the reports say it: each run's notes, then what one side carries and the other not
        say("Validity:")
        for v in report.validity:
            say("  - " + v)
    for t in report.comparison_tables + report.headline_tables + report.unmatched_tables:
        say(f"\n{t.title}")
        group = None
        rows = []
        for r in t.rows:
            if r.group != group and r.group:
                group = r.group
                rows.append([f"[{group}]"] + [""] * (len(t.columns) - 1))
            rows.append([c.text for c in r.cells])
        header = tuple(c.title for c in t.columns)
        numeric = {i for i, c in enumerate(t.columns) if c.numeric}
        say(format_table(header, rows, numeric))
        for n in t.notes:
            say(f"  {n}")
    for n in report.notes:
        say(f"note: {n}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    outputs = {
        k: getattr(args, k.replace("-", "_"))
        for k in ("html", "pdf", "xlsx", "csv", "csv-tables")
        if getattr(args, k.replace("-", "_"))
    }
    if not outputs:
        raise CliError(
            "say which files to write: --html FILE, --pdf FILE, --xlsx FILE, --csv FILE and/or "
            "--csv-tables FILE"
        )
    for path in outputs.values():
        if not Path(path).parent.is_dir():
            raise CliError(f"{path}: the folder {Path(path).parent} does not exist")

    def write(report) -> None:
        for kind, path in outputs.items():
            try:
                write_report_file(report, kind, path)
            except OSError as e:
                raise CliError(f"{e.filename or path}: {e.strerror or e}") from e
            print(f"{kind.upper()} report written to {path}")

    _build(args, args.compare or [], then=write)
    return 0


def _common(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--threshold",
        type=_threshold,
        default=5.0,
        metavar="PCT",
        help="changes within this percentage are noise when there are no repeated runs (default 5)",
    )
    sp.add_argument(
        "--match",
        choices=("auto", "exact", "spec"),
        default="auto",
        help="pair steps by what they do: equal access spec lines (not names) and load first, then the "
        "rest by access spec lines and place in the sequence, the load change listed under "
        "'What changed' (auto, default); equal lines, queue depth, workers and targets only "
        "(exact); or the access spec's lines alone (spec)",
    )
    sp.add_argument(
        "--include-incomplete",
        action="store_true",
        help="judge stopped, failed or partial steps too (by default they are shown, marked, and left "
        "out of the findings)",
    )
    sp.add_argument(
        "--no-repeats",
        action="store_true",
        help="do not look for repeats (same plan and tags) of a single run to measure noise",
    )
    sp.add_argument(
        "--labels",
        type=_labels,
        metavar="BASE,CAND",
        help="what to call the sides, the baseline first, e.g. before,after (default: the runs' "
        "tags where they tell the sides apart, else their names)",
    )


def register(sub) -> None:
    sp = sub.add_parser(
        "compare", help="compare stored runs: a before/after table per metric in the terminal"
    )
    sp.add_argument("run", type=run_group, metavar="BASELINE", help=GROUP_HELP)
    sp.add_argument("candidates", type=run_group, nargs="+", metavar="CANDIDATE", help=GROUP_HELP)
    _common(sp)
    sp.set_defaults(
        func=cmd_compare, title="", client="", author="", paper="A4", date=None, company="", logo=None
    )

    sp = sub.add_parser("report", help="write a client-ready report of stored runs (HTML, PDF, XLSX, CSV)")
    sp.add_argument(
        "run", type=run_group, metavar="RUN", help="the run reported (the baseline); " + GROUP_HELP
    )
    sp.add_argument(
        "--compare",
        type=run_group,
        nargs="+",
        action="extend",
        metavar="RUN2",
        help="candidate runs compared with RUN; each " + GROUP_HELP,
    )
    sp.add_argument("--html", metavar="FILE", help="one self-contained HTML file")
    sp.add_argument(
        "--pdf", metavar="FILE", help="a PDF with cover, tables, charts and a methodology appendix"
    )
    sp.add_argument("--xlsx", metavar="FILE", help="an Excel workbook with the tables and native charts")
    sp.add_argument(
        "--csv",
        metavar="FILE",
        help="every result as one long table (run, label, step, spec, "
        "queue depth, level, name, metric, value, unit)",
    )
    sp.add_argument("--csv-tables", metavar="FILE", help="the report's tables as CSV, each under its title")
    sp.add_argument("--title", default="Storage performance report", help="report title (cover page)")
    sp.add_argument("--client", default="", help="client name (cover page)")
    sp.add_argument("--author", default="", help="author (cover page)")
    sp.add_argument(
        "--company", default="", help="the author's company (cover page, header, document author)"
    )
    sp.add_argument("--logo", metavar="FILE", help="a logo image (PNG or JPEG) for the cover page")
    sp.add_argument("--date", help="date on the cover (default: today)")
    sp.add_argument("--paper", choices=("A4", "Letter"), default="A4", help="PDF paper size (default A4)")
    _common(sp)
    sp.set_defaults(func=cmd_report)

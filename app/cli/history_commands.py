"""`fiometer tag / note / rename / delete`: the user's edits to stored runs (kept out of cli.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.common import CliError, _store


def _summary(store, run_id: int):
    from app.store.queries import list_runs

    for r in list_runs(store):
        if r.id == run_id:
            return r
    raise CliError(f"there is no run {run_id} in {store.path}; `fiometer runs` lists the stored runs")


def _edit(args: argparse.Namespace, change) -> None:
    """Run one store edit, turning the store's errors into plain CLI errors."""
    from app.store.errors import StoreError

    store = _store(args)
    try:
        change(store)
    except StoreError as e:
        raise CliError(str(e)) from e
    finally:
        store.close()


def cmd_tag(args: argparse.Namespace) -> int:
    from app.store.queries import tag_run

    tags = [t.strip() for t in args.tags if t.strip()]
    if not tags:
        raise CliError("give at least one non-empty tag, e.g. `fiometer tag 3 before client-x`")
    result: list[str] = []

    def change(store) -> None:
        if args.remove:
            tag_run(store, args.run, remove=tags)
        else:
            tag_run(store, args.run, add=tags)
        result.extend(_summary(store, args.run).tags)

    _edit(args, change)
    print(f"Run {args.run} tags: {', '.join(result) or '(none)'}")
    return 0


def cmd_note(args: argparse.Namespace) -> int:
    from app.store.queries import annotate_run

    _edit(args, lambda store: annotate_run(store, args.run, notes=args.text))
    print(f"Run {args.run}: notes {'cleared' if not args.text else 'saved'}")
    return 0


def cmd_rename(args: argparse.Namespace) -> int:
    from app.store.queries import rename_run

    name = args.name.strip()
    if not name:
        raise CliError("the new name is empty; give a name, e.g. `fiometer rename 3 'EVA 4400 Vraid1'`")
    _edit(args, lambda store: rename_run(store, args.run, name))
    print(f"Run {args.run} renamed to {name!r}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from app.store.queries import delete_run

    said: list[str] = []

    def change(store) -> None:
        r = _summary(store, args.run)
        what = (
            f"run {r.id} {r.name!r} ({r.status}, {r.step_count} steps, started "
            f"{r.started[:19].replace('T', ' ')} UTC{', tags ' + ', '.join(r.tags) if r.tags else ''}) "
            "with all its samples, results, job files and fio output"
        )
        if not args.yes:
            raise CliError(f"this would delete {what}. Nothing was deleted; add --yes to delete it.")
        delete_run(store, r.id)
        said.append(what)

    _edit(args, change)
    print(f"Deleted {said[0]}")
    return 0


def cmd_import_results(args: argparse.Namespace) -> int:
    from app.analysis.iometer_import import IMPORT_TAG, import_results_file
    from app.analysis.iometer_results_reader import ResultsFileError

    if not Path(args.file).is_file():
        raise CliError(f"{args.file}: no such file")
    imported = []

    def change(store) -> None:
        try:
            imported.extend(import_results_file(store, args.file, [IMPORT_TAG, *(args.tag or [])]))
        except ResultsFileError as e:
            raise CliError(f"{e}\nNothing was imported.") from e

    _edit(args, change)
    for r in imported:
        print(
            f"Run {r.run_id}: {r.description or '(no description)'} ({r.tests} test{'s' * (r.tests != 1)}, "
            f"{r.status})"
        )
    print(f"{len(imported)} run{'s' * (len(imported) != 1)} imported from {args.file}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Read every page of the results database (opening it checks only where damage is likely)."""
    from app.store.database import check_store
    from app.store.errors import StoreError

    try:
        path = check_store(getattr(args, "db", None))
    except StoreError as e:
        raise CliError(str(e)) from e
    print(f"The results database {path} is sound (every page was read).")
    return 0


def register(sub) -> None:
    sp = sub.add_parser("check", help="check every page of the results database for damage")
    sp.set_defaults(func=cmd_check)

    sp = sub.add_parser(
        "import-results", help="import an Iometer results.csv into the history (a run per series)"
    )
    sp.add_argument("file", metavar="FILE.csv")
    sp.add_argument("--tag", action="append", help="tag the imported runs (they are always tagged iometer)")
    sp.set_defaults(func=cmd_import_results)

    sp = sub.add_parser("tag", help="add tags to a stored run (or remove them with --remove)")
    sp.add_argument("run", type=int, help="run id (see `fiometer runs`)")
    sp.add_argument("tags", nargs="+", metavar="TAG")
    sp.add_argument("--remove", action="store_true", help="remove these tags instead of adding them")
    sp.set_defaults(func=cmd_tag)

    sp = sub.add_parser("note", help="set a stored run's notes (an empty TEXT clears them)")
    sp.add_argument("run", type=int, help="run id")
    sp.add_argument("text", metavar="TEXT")
    sp.set_defaults(func=cmd_note)

    sp = sub.add_parser("rename", help="rename a stored run")
    sp.add_argument("run", type=int, help="run id")
    sp.add_argument("name", metavar="NAME")
    sp.set_defaults(func=cmd_rename)

    sp = sub.add_parser("delete", help="delete a stored run and everything recorded for it")
    sp.add_argument("run", type=int, help="run id")
    sp.add_argument(
        "--yes", action="store_true", help="really delete (without it, say what would be deleted)"
    )
    sp.set_defaults(func=cmd_delete)

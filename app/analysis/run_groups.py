"""Which stored runs make up a side of a comparison: the runs given, and repeats of a run found in the store.

Repeats of a run are other complete runs of the same plan (same plan hash) carrying exactly the same tags
(any case), e.g. three runs tagged "before": their spread is the run-to-run noise. Untagged runs are never
taken as repeats, so tagging is how a user says "these are the same measurement". The tag every imported
Iometer run gets automatically does not count: a results file often holds the same test under different
conditions. Series of one imported results file are never repeats of each other either: Iometer wrote
them one after another, usually changing something in between (a user who knows better groups their ids).
"""

from __future__ import annotations

from app.analysis.compare import Side, build_side
from app.analysis.iometer_import import IMPORT_TAG, imported_file
from app.store.database import Store
from app.store.queries import get_run, list_runs
from app.store.records import Run, RunListing

MAX_REPEATS = 20  # the newest ones; enough for a spread


def repeat_tags(r: RunListing) -> frozenset[str]:
    """The tags that make runs repeats of one measurement (any case; the automatic import tag left out)."""
    return frozenset(t.casefold() for t in r.tags) - {IMPORT_TAG}


def find_repeats(
    store: Store, run: Run, exclude: set[int] = frozenset(), result_levels: tuple[str, ...] | None = None
) -> list[Run]:
    """The run and its repeats (newest first after it); just [run] when there are none. ``result_levels``:
    read only those levels' results (get_run)."""
    tags = repeat_tags(run)
    if not tags:
        return [run]
    same = [
        r
        for r in list_runs(store, status="complete")
        if r.id != run.id
        and r.id not in exclude
        and r.plan_sha256 == run.plan_sha256
        and repeat_tags(r) == tags
    ]
    source = imported_file(run)
    found = []
    for r in same:
        other = get_run(store, r.id, result_levels=result_levels)
        if source is None or imported_file(other) != source:
            found.append(other)
        if len(found) == MAX_REPEATS:
            break
    return [run, *found]


def load_side(
    store: Store,
    ids: list[int],
    *,
    exclude: set[int] = frozenset(),
    repeats: bool = True,
    result_levels: tuple[str, ...] | None = None,
) -> Side:
    """A side from run ids (several = a group). ``exclude``: runs of the other sides, never taken as repeats;
    ``result_levels``: read only those levels' results (a comparison's figures are ALL's). Raises
    RunNotFound for an unknown id."""
    runs = [get_run(store, i, result_levels=result_levels) for i in ids]
    found = (
        find_repeats(store, runs[0], exclude | set(ids), result_levels)
        if repeats and len(runs) == 1
        else None
    )
    return build_side(runs, found)

"""`fiometer import-results`: a results.csv in Iometer 1.1.0's layout, the older layout, and files that are not one."""

from __future__ import annotations

import pytest

from app.analysis.iometer_csv import COLUMNS
from app.analysis.iometer_import import import_results_file, is_iometer_run
from app.analysis.iometer_results_reader import parse_results
from app.cli import main
from app.store.database import open_store
from app.store.queries import get_run, list_runs
from tests.helpers import shared_dir

RESULTS = shared_dir() / "iometer-results" / "bench_results-1.1.0.csv"
ROW_KINDS = ("ALL", "MANAGER", "WORKER", "DISK")
# What must survive import + export: rates, response times, counts and Iometer's latency bins.
COMPARED = [
    "IOps",
    "Read IOps",
    "Write IOps",
    "MiBps (Binary)",
    "Read MiBps (Binary)",
    "Write MiBps (Binary)",
    "MBps (Decimal)",
    "Read MBps (Decimal)",
    "Write MBps (Decimal)",
    "Average Response Time",
    "Average Read Response Time",
    "Average Write Response Time",
    "Maximum Response Time",
    "Maximum Read Response Time",
    "Maximum Write Response Time",
    "Errors",
    "Bytes Read",
    "Bytes Written",
    "Read I/Os",
    "Write I/Os",
    "# Managers",
    "# Workers",
    "# Disks",
    "Access Specification Name",
    *COLUMNS[59:],
]
# Totals Fiometer keeps as read + write (Iometer divides the total count by the run time).
SUMMED = {"IOps", "MiBps (Binary)", "MBps (Decimal)"}


def result_blocks(text: str) -> list[list[dict[str, str]]]:
    """Per test, the ALL/MANAGER/WORKER/DISK rows as column -> cell (PROCESSOR rows are not exported)."""
    blocks, header, cur = [], None, None
    for line in text.splitlines():
        cells = line.split(",")
        if cells[0] == "'Target Type":
            header, cur = cells, []
            blocks.append(cur)
        elif header and cells[0] in ROW_KINDS:
            cur.append(dict(zip(header, cells, strict=True)))
    return blocks


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    db = tmp_path_factory.mktemp("imp") / "h.db"
    assert main(["--db", str(db), "import-results", str(RESULTS)]) == 0
    return db


def test_every_series_becomes_a_complete_run_tagged_iometer(imported):
    with open_store(imported) as store:
        runs = sorted(list_runs(store), key=lambda r: r.id)
        assert len(runs) == 12
        assert {r.status for r in runs} == {"complete"} and all(r.tags == ["iometer"] for r in runs)
        assert runs[0].plan_name == "4K Random Read" and runs[-1].plan_name == "128K Sequential Write"
        run = get_run(store, runs[0].id)
    assert is_iometer_run(run) and run.host["tool_version"] == "1.1.0"
    assert [m.name for m in run.managers] == ["BENCH-01"]
    assert [w.name for w in run.workers] == ["Worker 1", "Worker 2", "Worker 3"]
    assert {t.name for t in run.targets} == {'E: "SCRATCH"'}
    (step,) = run.steps
    assert step.spec_name == "bench-spec" and step.queue_depth == 1
    assert step.spec_text == "4096,100,100,100,0,1,0,0"
    all_row = next(r for r in step.results if r.level == "all").metrics
    assert all_row.iops == pytest.approx(50551.951992) and all_row.ios == 758375
    assert all_row.lat_mean_ms == pytest.approx(0.059807, abs=1e-6)
    assert all_row.seconds == pytest.approx(15.0018935)


def test_import_then_export_gives_back_the_original_numbers(imported, tmp_path):
    original = result_blocks(RESULTS.read_text(encoding="cp1252"))
    assert len(original) == 12
    with open_store(imported) as store:
        ids = sorted(r.id for r in list_runs(store))
    exported = []
    for run_id in ids:
        out = tmp_path / f"{run_id}.csv"
        assert main(["--db", str(imported), "export", str(run_id), "--iometer-csv", str(out)]) == 0
        exported += result_blocks(out.read_bytes().decode("cp1252"))
    assert len(exported) == 12
    for test_no, (before, after) in enumerate(zip(original, exported, strict=True), 1):
        assert [(r["'Target Type"], r["Target Name"]) for r in after] == [
            (r["'Target Type"], r["Target Name"]) for r in before
        ], f"test {test_no}"
        for b, a in zip(before, after, strict=True):
            for col in COMPARED:
                where = f"test {test_no} {b['Target Name']} {col}: {a[col]} != {b[col]}"
                if (
                    col in SUMMED
                ):  # read + write rate, each already rounded to 6 places: last digit may differ
                    assert float(a[col]) == pytest.approx(float(b[col]), abs=1.01e-6), where
                else:
                    assert a[col] == b[col], where


def test_series_head_and_time_stamps_round_trip(imported, tmp_path):
    out = tmp_path / "1.csv"
    assert main(["--db", str(imported), "export", "1", "--iometer-csv", str(out)]) == 0
    exported = out.read_bytes().decode("cp1252").split("\r\n")
    original = RESULTS.read_text(encoding="cp1252").splitlines()
    assert exported[:13] == original[:13]  # head, spec block, 'Results
    stamps = [exported[i + 1] for i, ln in enumerate(exported) if ln == "'Time Stamp"]
    assert stamps == ["2026-03-14 09:12:05:417", "2026-03-14 09:12:20:618"]


def old_layout(text: str) -> str:
    """The fixture's first series as Iometer before 1.1.0 wrote it: 56 columns, binary MBps, no bins."""
    out = []
    for line in text.splitlines():
        cells = line.split(",")
        if cells[0] == "'Target Type" or cells[0] in ROW_KINDS:
            cells = cells[:12] + cells[15:59]
            if cells[0] == "'Target Type":
                cells[9:12] = ["MBps", "Read MBps", "Write MBps"]
        out.append(",".join(cells))
        if line == "'End Test":
            break
    return "\r\n".join(out) + "\r\n"


def test_older_56_column_layout_reads_through_its_header(tmp_path):
    src = tmp_path / "old.csv"
    src.write_text(old_layout(RESULTS.read_text(encoding="cp1252")), encoding="cp1252")
    assert len(src.read_text().splitlines()[13].split(",")) == 56
    with open_store(tmp_path / "h.db") as store:
        (imp,) = import_results_file(store, src)
        run = get_run(store, imp.run_id)
    res = {(r.level, r.key): r.metrics for r in run.steps[0].results}
    assert len(res) == 1 + 1 + 3 + 3
    m = res[("all", "ALL")]
    assert m.iops == pytest.approx(50551.951992)
    assert m.mibps == pytest.approx(197.468562, abs=1e-6)  # old "MBps" was binary
    assert m.lat_mean_ms == pytest.approx(0.059807, abs=1e-6) and m.lat_max_ms == pytest.approx(5.2576)
    assert m.read_hist == {}  # no latency bins before 1.1.0


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        ("hello,world\r\n", ":1:", "unexpected line"),
        (
            "'Test Type,Test Description\r\n0,x\r\n'Results\r\n'Target Type,Target Name,IOps\r\n",
            ":4:",
            "lacks the column(s) read i/os, write i/os",
        ),
        ("ALL,All,spec,1,1,1,5\r\n", ":1:", "before any 'Results header"),
        (
            "'Test Type,Test Description\r\n0,x\r\n'Access specifications\r\n'Access specification name,"
            "default assignment\r\ns,0\r\n'size,% of size,% reads,% random,delay,burst,align,reply\r\n"
            "512,100,abc\r\n'End access specifications\r\n",
            ":7:",
            "expected eight numbers",
        ),
        ("", ":1:", "no test results found"),
    ],
)
def test_bad_files_are_refused_with_the_line_and_nothing_is_stored(tmp_path, capsys, text, where, says):
    src = tmp_path / "bad.csv"
    src.write_text(text)
    db = tmp_path / "h.db"
    assert main(["--db", str(db), "import-results", str(src)]) == 2
    err = capsys.readouterr().err
    assert f"bad.csv{where}" in err and says in err and "Nothing was imported" in err
    assert "Traceback" not in err
    with open_store(db) as store:
        assert list_runs(store) == []


def test_a_number_cell_that_is_not_a_number_names_its_line(tmp_path, capsys):
    lines = RESULTS.read_text(encoding="cp1252").splitlines()[:29]
    assert lines[20].startswith("WORKER,Worker 1,")
    lines[20] = lines[20].replace(",255203,", ",lots,", 1)  # its Read I/Os
    src = tmp_path / "bad.csv"
    src.write_text("\r\n".join(lines) + "\r\n")
    assert main(["--db", str(tmp_path / "h.db"), "import-results", str(src)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:21:" in err and "'lots', not a number" in err, err


def test_missing_file(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "h.db"), "import-results", str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_parse_keeps_aborted_series_and_errors():
    text = RESULTS.read_text(encoding="cp1252").replace(
        "'End Test", "ERROR: disk went away\r\nAborted test", 1
    )
    series = parse_results(text)
    assert series[0].end == "aborted" and series[0].errors == ["disk went away"]
    assert series[1].end == "complete"


def test_show_gives_no_percentiles_for_iometer_bins(imported, capsys):
    import json

    assert main(["--db", str(imported), "show", "1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    all_row = next(r for r in shown["steps"][0]["results"] if r["level"] == "all")
    assert all_row["p99_ms"] is None and all_row["iops"] == pytest.approx(50551.951992)
    assert main(["--db", str(imported), "show", "1"]) == 0
    assert "Iometer 1.1.0" in capsys.readouterr().out

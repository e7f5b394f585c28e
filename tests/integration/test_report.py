"""`fiometer report`: the HTML, PDF, XLSX and CSV hold the stored numbers, in the before/after shape."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from app.analysis.compare import METRICS
from app.cli import main
from app.store.database import open_store
from app.store.queries import get_run
from tests.stored_runs import AFTER, BEFORE, RunSpec, StepSpec, record

M = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
RUN_FIELDS = [d.key for d in METRICS]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "h.db"
    with open_store(path) as store:
        record(store, RunSpec(BEFORE, name="EVA 4400, 32 disks Vraid5", tags=["before"]))
        record(store, RunSpec(AFTER, name="EVA 4400, 36 disks Vraid1", tags=["after"]))
        extra = [
            *AFTER[:3],
            replace(AFTER[3], qd=16),
            StepSpec("Sequential-1M-Write", 300, 314.57, 3.3, 9, 6),
        ]
        record(store, RunSpec(extra, name="EVA 4400, QD 16 check", tags=["qd16"], fio_version="3.35"))
    return path


def stored(db, run_id):
    """The ALL-level headline numbers per step, as the store has them."""
    with open_store(db) as store:
        run = get_run(store, run_id)
    out = {}
    for s in run.steps:
        m = next(r.metrics for r in s.results if r.level == "all")
        out[s.spec_name, s.queue_depth] = {d.key: d.value(m) for d in METRICS}
    return out


def cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True)


# --- HTML -----------------------------------------------------------------------------------------
class Tables(HTMLParser):
    """Tables by id: rows of (text, data-value or None, class), group heading rows kept as ("group", text)."""

    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.row, self.cell, self.svgs, self.external = {}, None, None, None, 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.cur = self.tables.setdefault(a.get("id"), [])
        elif tag == "tr" and self.cur is not None:
            self.row = []
            self.cur.append(self.row)
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ["", a.get("data-value"), a.get("class", "")]
            self.row.append(self.cell)
        elif tag == "svg":
            self.svgs += 1
        for k in ("src", "href"):
            if k in a:
                self.external.append(a[k])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.cell = None
        elif tag == "table":
            self.cur = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[0] += data


def test_html_is_self_contained_and_its_tables_match_the_store(db, tmp_path):
    out = tmp_path / "r.html"
    assert (
        main(
            [
                "--db",
                str(db),
                "report",
                "1",
                "--compare",
                "2",
                "--html",
                str(out),
                "--title",
                "EVA report",
                "--client",
                "ACME",
            ]
        )
        == 0
    )
    p = Tables()
    p.feed(out.read_text(encoding="utf-8"))
    # a bar chart per metric, per access spec the response time distribution and the share of I/Os by response
    # time, and the two runs' sweeps overlaid (the four specs differ in transfer size only: a block-size sweep;
    # IOPS, MB/s, response times and the knee chart), not repeated run by run; nothing to fetch (the links are
    # the table of contents)
    assert [x for x in p.external if not x.startswith("#")] == [] and p.svgs == 5 + 4 + 4 + 4
    before, after = stored(db, 1), stored(db, 2)
    # summary per run: every number equals the store's
    for run_id, values in ((1, before), (2, after)):
        rows = p.tables[f"summary-{run_id}"][1:]
        assert len(rows) == 4
        for row in rows:
            spec, qd = row[1][0], int(row[2][1])
            for cell, key in zip(row[5:10], RUN_FIELDS, strict=True):
                assert float(cell[1]) == pytest.approx(values[spec, qd][key], rel=1e-12), (spec, key)
    # the comparison: per metric a heading, then a row per access spec: baseline | candidate | change | change %
    rows = p.tables["compare-1"]
    head = [c[0] for c in rows[0]]
    assert head == [
        "Access specification",
        "Load",
        "before",
        "after",
        "Change",
        "Change %",
        "Verdict",
    ]  # the tags
    metric = None
    checked = 0
    for row in rows[1:]:
        if len(row) == 1:
            metric = next(d for d in METRICS if row[0][0].startswith(d.label))
            continue
        spec = row[0][0]
        assert row[1][0] == "QD 64"  # every row carries its load
        row = row[:1] + row[2:]
        b, c = before[spec, 64][metric.key], after[spec, 64][metric.key]
        assert float(row[1][1]) == pytest.approx(b) and float(row[2][1]) == pytest.approx(c)
        assert float(row[3][1]) == pytest.approx(c - b)
        assert float(row[4][1]) == pytest.approx((c - b) / b)
        improved = (c > b) == metric.higher_is_better
        expected = "" if abs(c - b) / b <= 0.05 else ("better" if improved else "worse")
        assert row[5][0] == expected and (expected in row[4][2] if expected else row[4][2] == "num")
        checked += 1
    assert checked == 4 * 5


def test_html_lists_unmatched_steps_and_what_differs(db, tmp_path):
    out = tmp_path / "r.html"
    assert (
        main(["--db", str(db), "report", "1", "--compare", "3", "--html", str(out), "--match", "exact"]) == 0
    )
    text = out.read_text(encoding="utf-8")
    p = Tables()
    p.feed(text)
    only = [(r[0][0], r[2][0]) for r in p.tables["unmatched-1"][1:]]
    assert only == [
        ("before", "Random-8k-70%Read"),
        ("qd16", "Random-8k-70%Read"),
        ("qd16", "Sequential-1M-Write"),
    ]
    assert "measured with fio 3.33 \u2192 fio 3.35" in text
    assert "--match auto" in text  # the way to pair the QD 64 / QD 16 steps is shown
    # by default the QD 64 and QD 16 steps pair, and the summary leads with the change
    assert main(["--db", str(db), "report", "1", "--compare", "3", "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    p = Tables()
    p.feed(text)
    assert [(r[0][0], r[2][0]) for r in p.tables["unmatched-1"][1:]] == [("qd16", "Sequential-1M-Write")]
    assert "<strong>What changed:</strong> queue depth 64 \u2192 16" in text


# --- PDF ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pdf_text(db, tmp_path_factory):
    out = tmp_path_factory.mktemp("pdf") / "r.pdf"
    res = cli(
        "--db",
        db,
        "report",
        "1",
        "--compare",
        "2",
        "3",
        "--pdf",
        out,
        "--title",
        "EVA 4400 expansion",
        "--client",
        "ACME Logistics",
        "--author",
        "J. Doe",
        "--date",
        "2026-05-04",
        "--paper",
        "Letter",
    )
    assert res.returncode == 0, res.stderr
    info = subprocess.run(["pdfinfo", str(out)], capture_output=True, text=True).stdout
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True).stdout
    return info, text.replace("\u2212", "-")


def test_pdf_cover_pages_and_paper(pdf_text):
    info, text = pdf_text
    assert "612 x 792 pts (letter)" in info
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    cover = text.split("\f")[0]
    for s in ("EVA 4400 expansion", "ACME Logistics", "J. Doe", "2026-05-04"):
        assert s in cover
    assert f"Page 2 of {pages}" in text and f"Page {pages} of {pages}" in text


def test_pdf_comparison_rows_hold_the_table_numbers(pdf_text):
    _, text = pdf_text
    lines = text.splitlines()
    expected = [  # spec, baseline, candidate, change, change %, verdict (IOPS, then MB/s, then avg ms)
        ("Max Throughput-100%Read", "QD 64", "10,809", "11,686", "+877", "+8.1 %", "better"),
        ("Max Throughput-50%Read", "QD 64", "1,530", "5,113", "+3,583", "+234.2 %", "better"),
        (
            "RealLife-60%Rand-65%Read",
            "QD 64",
            "23.9",
            "33.5",
            "+9.60",
            "+40.2 %",
            "better",
        ),  # 3 significant digits
        ("Max Throughput-100%Read", "QD 64", "2.67", "5.09", "+2.42", "+90.6 %", "worse"),
        ("Max Throughput-50%Read", "QD 64", "34.0", "6.63", "-27.4", "-80.5 %", "better"),
        ("Max Throughput-100%Read", "QD 64", "40.0", "41.0", "+1.00", "+2.5 %"),  # within 5 %: not marked
    ]
    for cells in expected:
        pattern = r"\s+".join(re.escape(c) for c in cells) + (r"\s*$" if len(cells) == 6 else "")
        assert any(re.search(pattern, ln) for ln in lines), cells


def test_pdf_has_charts_unmatched_steps_and_the_methodology(db, pdf_text):
    _, text = pdf_text
    for s in (
        "Charts",
        "Average response time (ms)",
        "Not compared",
        "Sequential-1M-Write",
        "Appendix: methodology",
        "fio 3.33",
        "fio 3.35",
        "direct=1",
        "ioengine=libaio",
        "Direct I/O",
        "/mnt/data/iobw.tst",
        "Plan SHA-256",
        "Ramp-up per step",
        "lab1",
    ):
        assert s in text, s
    with open_store(db) as store:
        plan_hash = get_run(store, 1).plan_sha256
    assert plan_hash in text.replace("\n", "").replace(" ", "")


# --- XLSX -----------------------------------------------------------------------------------------
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PR = "{http://schemas.openxmlformats.org/package/2006/relationships}"


class Workbook:
    """Just enough of an .xlsx reader: sheets by name as {cell ref: value}, and each sheet's XML."""

    def __init__(self, path):
        self.z = zipfile.ZipFile(path)
        shared = (
            ET.fromstring(self.z.read("xl/sharedStrings.xml"))
            if "xl/sharedStrings.xml" in self.z.namelist()
            else None
        )
        self.strings = (
            ["".join(t.text or "" for t in si.iter(f"{M}t")) for si in shared.iter(f"{M}si")]
            if shared is not None
            else []
        )
        rels = ET.fromstring(self.z.read("xl/_rels/workbook.xml.rels"))
        target = {r.get("Id"): r.get("Target") for r in rels.iter(f"{PR}Relationship")}
        wb = ET.fromstring(self.z.read("xl/workbook.xml"))
        self.files = {
            s.get("name"): "xl/" + target[s.get(f"{R}id")].lstrip("/").removeprefix("xl/")
            for s in wb.iter(f"{M}sheet")
        }
        self.names = [s.get("name") for s in wb.iter(f"{M}sheet")]
        self.workbook = wb

    def defined_names(self):
        """{"'Sheet'!Print_Titles": "'Sheet'!$1:$2"}: the workbook's defined names by sheet."""
        out = {}
        for d in self.workbook.iter(f"{M}definedName"):
            name = d.get("name").removeprefix("_xlnm.")
            sheet = self.names[int(d.get("localSheetId"))] if d.get("localSheetId") else ""
            out[f"'{sheet}'!{name}" if sheet else name] = d.text
        return out

    def xml(self, name):
        return ET.fromstring(self.z.read(self.files[name]))

    def cells(self, name):
        out = {}
        for c in self.xml(name).iter(f"{M}c"):
            v = c.find(f"{M}v")
            if v is None:
                continue
            out[c.get("r")] = self.strings[int(v.text)] if c.get("t") == "s" else float(v.text)
        return out

    def rows(self, name):
        rows: dict[int, dict[int, object]] = {}
        for ref, v in self.cells(name).items():
            col, row = re.fullmatch(r"([A-Z]+)(\d+)", ref).groups()
            n = 0
            for ch in col:
                n = n * 26 + ord(ch) - 64
            rows.setdefault(int(row), {})[n - 1] = v
        return [[r.get(i) for i in range(max(r) + 1)] for _, r in sorted(rows.items())]


def test_xlsx_reads_back_with_the_same_values_frozen_filtered_and_native_charts(db, tmp_path):
    out = tmp_path / "r.xlsx"
    assert main(["--db", str(db), "report", "1", "--compare", "2", "--xlsx", str(out)]) == 0
    before, after = stored(db, 1), stored(db, 2)
    wb = Workbook(out)
    comp = "Comparison 1"
    # the four specs share one shape and differ in transfer size only: each run is also a block-size sweep
    assert wb.names == [
        "Summary",
        "At a glance",
        comp,
        "Headlines 1",
        "Percentiles",
        "Environment",
        "Run 1 results",
        "Run 1 sweep",
        "Run 2 results",
        "Run 2 sweep",
        "Job options",
        "Run 1 facts",
        "Run 2 facts",
        "Charts",
        "Sweep charts",
        "Job files",
        "data",
    ]
    # printable: landscape, one page wide, the header row on every page
    setup = wb.xml(comp).find(f"{M}pageSetup")
    assert setup.get("orientation") == "landscape" and setup.get("fitToWidth") in (None, "1")
    assert setup.get("fitToHeight") == "0"
    assert wb.defined_names().get(f"'{comp}'!Print_Titles") == f"'{comp}'!$1:$2"
    rows = wb.rows(comp)
    assert rows[0] == ["after (run 2) compared with before (run 1)"]
    assert rows[1] == [
        "Metric",
        "Access specification",
        "Load",
        "before",
        "after",
        "Change",
        "Change %",
        "Verdict",
    ]
    data = [r + [None] * (8 - len(r)) for r in rows[2:22]]  # an empty verdict: no cell
    for metric, spec, load, b, c, change, pct, verdict in data:
        assert load == "QD 64"
        key = next(d.key for d in METRICS if metric.startswith(d.label))
        assert b == pytest.approx(before[spec, 64][key]) and c == pytest.approx(after[spec, 64][key])
        assert change == pytest.approx(c - b) and pct == pytest.approx((c - b) / b)
        assert verdict in ("better", "worse", None)
    assert {r[0] for r in data} == {
        "IOPS",
        "MB/s",
        "Average response time (ms)",
        "Maximum response time (ms)",
        "99th percentile response time (ms)",
    }
    sheet = wb.xml(comp)
    pane = sheet.find(f".//{M}pane")
    assert pane.get("state") == "frozen" and pane.get("ySplit") == "2"  # title and header stay in view
    assert sheet.find(f"{M}autoFilter").get("ref") == "A2:H22"
    styles = wb.z.read("xl/styles.xml").decode()
    assert 'formatCode="+0.0%;-0.0%;0.0%"' in styles and 'formatCode="#,##0"' in styles
    # charts: one per metric, each series drawn from the Charts sheet's cells
    charts = sorted(
        (n for n in wb.z.namelist() if n.startswith("xl/charts/chart")),
        key=lambda n: int(re.search(r"(\d+)\.xml$", n).group(1)),
    )
    kinds = [ET.fromstring(wb.z.read(n)).find(f".//{C}plotArea")[1].tag.removeprefix(C) for n in charts]
    assert kinds.count("barChart") == 5  # one per metric
    # the sweeps (each run is a block-size sweep) as native line charts, both runs on the first
    assert kinds[5:] and set(kinds[5:]) == {"scatterChart"}
    first = ET.fromstring(wb.z.read(charts[5]))
    assert len(first.findall(f".//{C}ser")) == 2
    chart_cells = wb.cells("Charts")
    iops = ET.fromstring(wb.z.read("xl/charts/chart1.xml"))
    assert iops.find(f".//{C}barChart/{C}barDir").get("val") == "bar"
    sers = iops.findall(f".//{C}ser")
    assert len(sers) == 2
    for ser, values in zip(sers, (before, after), strict=True):
        ref = ser.find(f"{C}val/{C}numRef/{C}f").text
        m = re.fullmatch(r"Charts!\$([A-Z])\$(\d+):\$([A-Z])\$(\d+)", ref)
        col, r1, _, r2 = m.groups()
        cats = [chart_cells[f"A{r}"] for r in range(int(r1), int(r2) + 1)]
        vals = [chart_cells[f"{col}{r}"] for r in range(int(r1), int(r2) + 1)]
        assert all(c.endswith(" (QD 64)") for c in cats)  # every bar carries its load
        assert vals == [pytest.approx(values[spec.removesuffix(" (QD 64)"), 64]["iops"]) for spec in cats]
    # data: the long form, every ALL number as stored
    data_rows = wb.rows("data")
    head = data_rows[0]
    assert head == [
        "run",
        "label",
        "step",
        "spec",
        "queue_depth",
        "level",
        "manager",
        "name",
        "metric",
        "value",
        "unit",
        "workers",
        "targets",
        "phase",
        "step_status",
        "validity",
    ]
    assert wb.xml("data").find(f".//{M}pane").get("ySplit") == "1"
    found = {(r[0], r[3], r[8]): r[9] for r in data_rows[1:] if r[5] == "all"}
    for run_id, values in ((1, before), (2, after)):
        for (spec, _), v in values.items():
            assert found[(run_id, spec, "iops")] == pytest.approx(v["iops"])
            assert found[(run_id, spec, "lat_p99")] == pytest.approx(v["p99_ms"])


# --- CSV ------------------------------------------------------------------------------------------
def test_csv_is_one_tidy_table_of_every_stored_number(db, tmp_path):
    out = tmp_path / "r.csv"
    assert main(["--db", str(db), "report", "1", "--compare", "2", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    assert list(rows[0]) == [
        "run",
        "label",
        "step",
        "spec",
        "queue_depth",
        "level",
        "manager",
        "name",
        "metric",
        "value",
        "unit",
        "workers",
        "targets",
        "phase",
        "step_status",
        "validity",
    ]
    assert {(r["workers"], r["targets"], r["phase"], r["step_status"]) for r in rows} == {
        ("1", "1", "measure", "complete")
    }
    # the stored steps read only: write metrics do not apply and are blank, never 0
    writes = [r for r in rows if r["metric"].startswith("write_")]
    assert writes and all(r["value"] == "" for r in writes)
    before, after = stored(db, 1), stored(db, 2)
    names = {
        "iops": "iops",
        "mbps": "mbps",
        "lat_mean_ms": "lat_mean",
        "lat_max_ms": "lat_max",
        "p99_ms": "lat_p99",
    }
    seen = 0
    for r in rows:
        assert r["label"] == {"1": "before", "2": "after"}[r["run"]]
        if r["level"] == "all" and r["metric"] in names.values():
            key = next(k for k, v in names.items() if v == r["metric"])
            values = before if r["run"] == "1" else after
            assert float(r["value"]) == pytest.approx(values[r["spec"], int(r["queue_depth"])][key], rel=1e-9)
            seen += 1
    assert seen == 2 * 4 * 5
    assert {r["level"] for r in rows} == {"all", "manager", "worker", "target"}


def test_csv_tables_hold_the_same_comparison_table(db, tmp_path):
    out = tmp_path / "t.csv"
    assert main(["--db", str(db), "report", "1", "--compare", "2", "--csv-tables", str(out)]) == 0
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    header = rows.index(
        ["Metric", "Access specification", "Load", "before", "after", "Change", "Change %", "Verdict"]
    )
    before, after = stored(db, 1), stored(db, 2)
    for metric, spec, load, b, c, change, pct, verdict in rows[header + 1 : header + 21]:
        assert load == "QD 64"
        key = next(d.key for d in METRICS if metric.startswith(d.label))
        assert float(b) == pytest.approx(before[spec, 64][key], rel=1e-9)
        assert float(c) == pytest.approx(after[spec, 64][key], rel=1e-9)
        assert float(change) == pytest.approx(float(c) - float(b), rel=1e-9)
        assert float(pct) == pytest.approx((float(c) - float(b)) / float(b) * 100, rel=1e-6)
        assert verdict in ("better", "worse", "")
    assert ["Run 1 \u201cEVA 4400, 32 disks Vraid5\u201d \u2014 results per step"] in rows


def test_csv_cells_that_look_like_formulas_are_neutralised_but_negative_numbers_stay(tmp_path):
    db = tmp_path / "f.db"
    evil = '=HYPERLINK("http://x","y")'
    with open_store(db) as store:
        record(store, RunSpec([StepSpec("@SUM(A1)", 100, 1, 1, 2, 1.5)], name=evil, tags=["+a"]))
        record(store, RunSpec([StepSpec("@SUM(A1)", 50, 0.5, 2, 3, 2.5)], name="-b", tags=["-b"]))
    tables = tmp_path / "t.csv"
    assert (
        main(
            [
                "--db",
                str(db),
                "report",
                "1",
                "--compare",
                "2",
                "--csv",
                str(tmp_path / "r.csv"),
                "--csv-tables",
                str(tables),
            ]
        )
        == 0
    )
    rows = list(csv.reader(io.StringIO((tmp_path / "r.csv").read_text(encoding="utf-8-sig"))))
    cells = [c for r in rows for c in r]
    assert "'@SUM(A1)" in cells and "'+a" in cells and "'-b" in cells
    assert not [
        c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not re.fullmatch(r"-[\d.e+-]+", c))
    ]
    t = list(csv.reader(io.StringIO(tables.read_text(encoding="utf-8-sig"))))
    change = next(r for r in t if r[:2] == ["IOPS", "'@SUM(A1)"])
    assert float(change[5]) == -50.0 and change[6] == "-50.0"  # real negative numbers stay numbers
    assert any(evil in c for r in t for c in r) and not any(
        c.startswith(("=", "@", "+")) for r in t for c in r
    )


MIN_TEXT = 150  # characters on a page besides its header and footer: less is a blank or orphan page


def page_texts(pdf) -> list[str]:
    pages = int(
        re.search(
            r"Pages:\s+(\d+)", subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
        ).group(1)
    )
    out = []
    for n in range(1, pages + 1):
        text = subprocess.run(
            ["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(pdf), "-"],
            capture_output=True,
            text=True,
        ).stdout
        lines = [ln for ln in text.splitlines() if ln.strip()]
        body = lines[1:-1] if n > 1 else lines  # body pages: a header line and a footer line
        out.append("".join("".join(ln.split()) for ln in body))
    return out


def test_a_report_where_nothing_pairs_has_no_blank_page_and_no_chart_off_the_page(tmp_path):
    db = tmp_path / "apart.db"
    with open_store(db) as store:
        record(store, RunSpec(BEFORE, name="a", tags=["a"]))
        record(store, RunSpec([replace(s, spec=s.spec + " (new)") for s in AFTER], name="b", tags=["b"]))
    out = tmp_path / "r.pdf"
    res = cli("--db", db, "report", "1", "--compare", "2", "--pdf", out)
    assert res.returncode == 0, res.stderr
    texts = page_texts(out)
    assert {n: t for n, t in enumerate(texts, 1) if len(t) < MIN_TEXT} == {}
    assert "Notcompared" in "".join(texts)
    bbox = subprocess.run(["pdftotext", "-bbox", str(out), "-"], capture_output=True, text=True).stdout
    assert not [y for y in re.findall(r'yMax="([\d.]+)"', bbox) if float(y) > 841.9]


# --- refusals -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["report", "9", "--html", "x.html"], "There is no run 9"),
        (["report", "1", "--compare", "7", "--html", "x.html"], "There is no run 7"),
        (["report", "1"], "say which files to write"),
        (["report", "1", "--pdf", "/no/such/dir/r.pdf"], "does not exist"),
        (["compare", "1", "8"], "There is no run 8"),
        (["report", "1", "--html", "."], "Is a directory"),
        (["report", "1", "--compare", "2", "--labels", "a,b,c", "--html", "x.html"], "3 labels for 2 sides"),
        (["report", "1", "--logo", "no-such.png", "--pdf", "x.pdf"], "--logo no-such.png: no such file"),
        (["export", "1"], "say what to write: --iometer-csv OUT.csv and/or --samples OUT.csv"),
        (["export", "1", "--samples", "/no/such/dir/s.csv"], "does not exist"),
    ],
)
def test_bad_requests_get_a_clear_message(db, tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    assert main(["--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_an_unwritable_pdf_is_a_clear_error(db, tmp_path):
    res = cli("--db", db, "report", "1", "--pdf", tmp_path)  # a folder, not a file
    assert res.returncode == 2 and "cannot be written" in res.stderr and "Traceback" not in res.stderr


def test_a_group_of_repeats_sets_the_noise_threshold(db, tmp_path):
    """Runs 1 and 2 as one group (a 'before' measured twice): their spread, not 5 %, decides."""
    out = tmp_path / "r.html"
    assert main(["--db", str(db), "report", "1,2", "--compare", "3", "--html", str(out)]) == 0
    p = Tables()
    p.feed(out.read_text(encoding="utf-8"))
    rows = p.tables["compare-1"]
    head = [c[0] for c in rows[0]]
    assert head[2] == "Mean of runs 1, 2" and "Noise \u00b1" in head  # runs 1 and 2 share no tag
    before, after = stored(db, 1), stored(db, 2)
    iops = rows[2]  # IOPS, Max Throughput-100%Read: 10,809 and 11,686 -> mean 11,247.5, CV 5.5 %
    assert iops[0][0] == "Max Throughput-100%Read"
    mean = (before["Max Throughput-100%Read", 64]["iops"] + after["Max Throughput-100%Read", 64]["iops"]) / 2
    assert float(iops[2][1]) == pytest.approx(mean)
    assert float(iops[head.index("Noise \u00b1")][1]) == pytest.approx(2 * 0.05515, abs=1e-4)
    assert "Noise threshold per row" in out.read_text(encoding="utf-8")


def test_a_malformed_run_group_is_an_argument_error(db, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--db", str(db), "report", "1,x", "--html", "x.html"])
    assert e.value.code == 2 and "expected run ids such as 3 or 3,4,5" in capsys.readouterr().err


def test_compare_prints_the_table(db, capsys):
    assert main(["--db", str(db), "compare", "1", "2", "--threshold", "10"]) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"Max Throughput-100%Read\s+QD 64\s+10,809\s+11,686\s+\+877\s+\+8\.1 %\s*$", out, re.MULTILINE
    )
    assert "  What changed: nothing Fiometer records" in out
    assert "Changes within \u00b110 %" in out


LONG = [f"Spec {i:02d} " + "very-long-access-specification-name-" * (1 + i % 3) + f"{i}KiB" for i in range(9)]
ONE_LINE = [
    f"Sequential-1MiB-100%Read-QD256-n{i:02d}-x"[:36] for i in range(18)
]  # the longest kept on one line


@pytest.mark.parametrize("names", [LONG + ONE_LINE[:9], ONE_LINE], ids=["wrapping-names", "one-line-names"])
def test_pdf_text_stays_inside_the_page_margins(tmp_path, names):
    """Long access spec names, big numbers, many steps: tables shrink or wrap, charts split; nothing clipped."""
    db = tmp_path / "wide.db"
    with open_store(db) as store:
        record(
            store,
            RunSpec(
                [
                    StepSpec(n, 9_876_543 + i, 98_765.43, 1.2345, 12_345.678, 1_234.5678)
                    for i, n in enumerate(names)
                ]
            ),
        )
        record(
            store,
            RunSpec(
                [StepSpec(n, 1500 + 77 * i, 12 + i, 0.0123 + i / 9, 25, 0.004) for i, n in enumerate(names)]
            ),
        )
    out = tmp_path / "wide.pdf"
    res = cli(
        "--db",
        db,
        "report",
        "1",
        "--compare",
        "2",
        "--pdf",
        out,
        "--client",
        "A client with a name long enough to need more than one line on the cover page of the report, surely",
    )
    assert res.returncode == 0, res.stderr
    bbox = subprocess.run(["pdftotext", "-bbox", str(out), "-"], capture_output=True, text=True).stdout
    page_w, page_h = 595.3, 841.9  # A4
    margin = 20 / 25.4 * 72 - 1  # 20 mm side margins, minus a point of rounding
    words = re.findall(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', bbox
    )
    assert len(words) > 1000
    outside = [
        w[4] for w in words if float(w[0]) < margin or float(w[2]) > page_w - margin or float(w[3]) > page_h
    ]
    assert outside == []

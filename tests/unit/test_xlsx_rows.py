"""The workbook's data sheet written as XML rows (app.report.xlsx_rows) holds the very cells XlsxWriter's
cell-by-cell writing gives, for every kind of value a row may carry, and stops at Excel's row limit saying so."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xlsxwriter

from app.report import xlsx_rows
from app.report.xlsx_rows import RowsSheet
from tests.integration.test_report import Workbook  # the tests' small .xlsx reader

OPTIONS = {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False}
HEAD = ["run", "name", "value", "note"]
VALUES: list[object] = [
    0,
    -1,
    2**53 + 1,
    10**20,
    True,
    0.1,
    -0.0,
    1e-300,
    1.7976931348623157e308,
    123456.78901234567,
    "",
    " lead and trail ",
    "a & b < c > d \"q\" 'a'",
    "control \x01\x1f chars",
    "Ünïcödé — 中文 🙂",
    "=SUM(A1)",
    "x" * 20_000,
    None,
    np.int64(7),
    np.float64(2.5),
]


def rows() -> list[tuple[object, ...]]:
    out = []
    for i, v in enumerate(VALUES):
        out.append((i + 1, f"W{i}", v, "Cache" if i % 3 else ""))
    return out


def cell_by_cell(path) -> None:
    """The sheet as XlsxWriter's own API writes it (what put_data did)."""
    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    ws = wb.add_worksheet("data")
    for i, h in enumerate(HEAD):
        ws.write(0, i, h, wb.add_format({"bold": True}))
    for n, row in enumerate(rows(), 1):
        for i, v in enumerate(row):
            if v is None:
                continue
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, int | float):
                ws.write_number(n, i, v)
            else:
                ws.write_string(n, i, v)
    ws.autofilter(0, 0, n, len(HEAD) - 1)
    wb.close()


def as_rows(path):
    wb = Workbook(path)
    return wb.rows("data"), wb.xml("data")


def test_the_same_cells_as_xlsxwriter_writes_one_by_one(tmp_path):
    ref, new = tmp_path / "ref.xlsx", tmp_path / "new.xlsx"
    cell_by_cell(ref)
    wb = xlsxwriter.Workbook(str(new), OPTIONS)
    ws = wb.add_worksheet("Summary")
    ws.write_string(0, 0, "Cache")  # a string shared with another sheet keeps one index
    ws = wb.add_worksheet("data", worksheet_class=RowsSheet)
    for i, h in enumerate(HEAD):
        ws.write(0, i, h, wb.add_format({"bold": True}))
    assert ws.put_rows(iter(rows()), len(HEAD)) == len(VALUES)
    ws.autofilter(0, 0, len(VALUES), len(HEAD) - 1)
    wb.close()
    (want, want_xml), (got, got_xml) = as_rows(ref), as_rows(new)
    assert got == want
    assert got[0] == HEAD and len(got) == len(VALUES) + 1
    m = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    for x in (want_xml, got_xml):
        assert x.find(f"{m}dimension").get("ref") == f"A1:D{len(VALUES) + 1}"
        assert x.find(f"{m}autoFilter").get("ref") == f"A1:D{len(VALUES) + 1}"
    shared = Workbook(new).strings
    assert "control _x0001__x001F_ chars" in shared and "x" * 20_000 in shared  # escaped as Excel does, whole


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_a_value_that_is_not_finite_leaves_its_cell_empty(tmp_path, bad):
    path = tmp_path / "r.xlsx"
    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    ws = wb.add_worksheet("data", worksheet_class=RowsSheet)
    ws.write(0, 0, "value")
    ws.put_rows([(1.5,), (bad,), (2.5,)], 1)
    wb.close()
    cells = Workbook(path).cells("data")
    assert cells == {"A1": "value", "A2": 1.5, "A4": 2.5}


def test_rows_beyond_excels_limit_are_left_out_and_the_last_row_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_rows, "EXCEL_ROWS", 10)
    path = tmp_path / "r.xlsx"
    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    ws = wb.add_worksheet("data", worksheet_class=RowsSheet)
    ws.write(0, 0, "n")
    n = ws.put_rows(([i] for i in range(25)), 1, "Every row is in the CSV.")
    wb.close()
    cells = Workbook(path).cells("data")
    assert n == 9 and len(cells) == 10  # the header, 8 rows and the note: 10 rows, Excel's (patched) limit
    assert [cells[f"A{r}"] for r in range(2, 10)] == [float(i) for i in range(8)]
    assert cells["A10"] == "17 more rows left out: Excel holds 10 rows a sheet. Every row is in the CSV."


def test_a_sheet_without_rows_is_its_header(tmp_path):
    path = tmp_path / "r.xlsx"
    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    ws = wb.add_worksheet("data", worksheet_class=RowsSheet)
    for i, h in enumerate(HEAD):
        ws.write(0, i, h)
    assert ws.put_rows([], len(HEAD)) == 0
    wb.close()
    assert as_rows(path)[0] == [HEAD]

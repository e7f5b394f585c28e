"""A worksheet of many plain rows written straight as the sheet's XML (the workbook's ``data`` sheet).

XlsxWriter keeps every cell written with ``write_number``/``write_string`` as an object until the workbook
closes, then writes each through its general cell writer: about 3.6 us a cell, 6.5 s for the 1.8 million
cells of an 8-hour 64-worker run against a 1-hour one. The cells of the ``data`` sheet are plain (no format,
no formula): here each row is made into its XML as it comes (one string per row, strings through the
workbook's own shared-string table, numbers as XlsxWriter writes them) and kept in a temporary file, which
is copied into the sheet where XlsxWriter writes its rows. The cells are the same; XlsxWriter still writes
the rest of the sheet (dimension, frozen pane, filter, columns, print set-up).

Written as ``write_number``/``write_string`` would: ``None`` leaves the cell empty, an empty string is a
string cell, a number is written with 16 significant digits. Unlike ``write_number``, a NaN or an infinity
leaves the cell empty instead of raising (a damaged stored value must not stop the report). Excel holds
1,048,576 rows: rows beyond are left out and the sheet's last row says how many, and where they are."""

from __future__ import annotations

import math
import numbers
import tempfile
from collections.abc import Iterable, Sequence
from typing import IO

from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.worksheet import Worksheet

EXCEL_ROWS = 1_048_576
EXCEL_STRING = 32_767  # characters a cell holds (UTF-16 units: a string under half of it always fits)
_COPY = 1 << 20


class RowsSheet(Worksheet):  # type: ignore[misc]  # (xlsxwriter is untyped here)
    """A worksheet whose first row is written the usual way (the header, with its format) and whose other rows
    come from ``put_rows``, as plain cells. Add it with ``workbook.add_worksheet(name, worksheet_class=RowsSheet)``."""

    def __init__(self) -> None:
        super().__init__()
        self._rows_file: IO[str] | None = None
        self._rows_count = 0

    def put_rows(self, rows: Iterable[Sequence[object]], ncols: int, overflow: str = "") -> int:
        """Write ``rows`` (each of at most ``ncols`` values) from the sheet's second row on; returns how many
        were written. ``overflow`` names where rows beyond Excel's limit can be found, said in the last row."""
        out = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed when the sheet is written
        index = (
            self.str_table._get_shared_string_index
        )  # the workbook's table: strings shared with every sheet
        cols = [xl_col_to_name(i) for i in range(ncols)]
        isfinite = math.isfinite
        room = EXCEL_ROWS - 1 - (1 if overflow else 0)
        n = left_out = 0
        chunk: list[str] = []
        for row in rows:
            if n >= room:
                left_out += 1
                continue
            n += 1
            r = n + 1  # the sheet's row number (the header is row 1)
            cells = [f'<row r="{r}">']
            for col, v in zip(cols, row, strict=False):
                if v is None:
                    continue
                if isinstance(v, str):
                    s = v if len(v) <= EXCEL_STRING // 2 else v[:EXCEL_STRING]
                    cells.append(f'<c r="{col}{r}" t="s"><v>{index(s)}</v></c>')
                elif isinstance(v, int | float):
                    if isfinite(v):
                        cells.append(f'<c r="{col}{r}"><v>{v:.16G}</v></c>')
                elif isinstance(v, numbers.Real):  # numpy's numbers
                    if isfinite(float(v)):
                        cells.append(f'<c r="{col}{r}"><v>{float(v):.16G}</v></c>')
                else:
                    cells.append(f'<c r="{col}{r}" t="s"><v>{index(str(v)[:EXCEL_STRING])}</v></c>')
            cells.append("</row>")
            chunk.append("".join(cells))
            if len(chunk) >= 4096:
                out.write("".join(chunk))
                chunk = []
        if left_out:
            n += 1
            note = f"{left_out:,} more rows left out: Excel holds {EXCEL_ROWS:,} rows a sheet. {overflow}".strip()
            chunk.append(f'<row r="{n + 1}"><c r="A{n + 1}" t="s"><v>{index(note)}</v></c></row>')
        out.write("".join(chunk))
        self._rows_file, self._rows_count = out, n
        if n:  # the sheet's extent, as writing its last cell would have set it
            self._check_dimensions(n, ncols - 1)
        return n

    def _write_sheet_data(self) -> None:
        if self._rows_file is None:
            super()._write_sheet_data()
            return
        last = self.__dict__["dim_rowmax"]  # (set in XlsxWriter's __init__, where mypy cannot type it)
        self.dim_rowmax = 0  # XlsxWriter writes the header row (the only row it holds) ...
        try:
            self._xml_start_tag("sheetData")
            if self.dim_rowmin is not None and self.table[0]:
                self._write_rows()
            self.dim_rowmax = last
            self._rows_file.seek(0)  # ... and the rows made here follow it
            while data := self._rows_file.read(_COPY):
                self.fh.write(data)
            self._xml_end_tag("sheetData")
        finally:
            self.dim_rowmax = last
            self._rows_file.close()
            self._rows_file = None

"""The PDF keeps a table with its heading and its notes on one page where they fit: what is measured on
a laid-out QTextDocument, and the page break put into the markup."""

from __future__ import annotations

import pytest

from app.report.pdf_markup import STYLE, keep_together

pytest.importorskip("PySide6.QtGui")


def layout(body: str, page_height: float = 400.0):
    from PySide6.QtCore import QSizeF
    from PySide6.QtGui import QTextDocument

    from app.report.pdf import ensure_gui

    ensure_gui()
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setPageSize(QSizeF(400, page_height))
    doc.setHtml(f"<html><head><style>{STYLE}</style></head><body>{body}</body></html>")
    return doc


TABLE = (
    '<h2>Results</h2><table class="data"><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table>'
    '<p class="note">A note that belongs to the table above.</p>'
)


def filler(px: float) -> str:
    return f'<p style="margin-bottom: 0"><img src="x" width="10" height="{px:.0f}"></p>'


@pytest.mark.parametrize("cut", ["heading", "note"])
def test_a_table_whose_heading_or_note_would_fall_on_another_page_moves_whole(cut):
    from app.report.pdf import straddling, units

    probe = layout(TABLE)
    (unit,) = units(probe, {})
    height = unit[1] - unit[0]
    # push the unit down so that only its heading stays on page 1, or only its note goes to page 2
    shift = 350 if cut == "heading" else 400 - height + 3
    doc = layout(filler(shift) + TABLE)
    ((top, bottom),) = units(doc, {})
    assert int(top // 400) != int((bottom - 1) // 400)
    assert straddling(doc, {}, 400) == {0}
    fixed = keep_together(filler(shift) + TABLE, {0})
    assert fixed.count("page-break-before") == 1 and '<h2 style="page-break-before: always">' in fixed
    doc = layout(fixed)
    ((top, bottom),) = units(doc, {})
    assert int(top // 400) == int((bottom - 1) // 400) == 1 and straddling(doc, {}, 400) == set()


def test_a_table_with_many_columns_is_split_into_parts_that_repeat_its_row_keys():
    from app.report.pdf_markup import MAX_COLUMNS, column_parts, table_markup
    from app.report.tables import Cell, Column, Row, Table

    cols = [Column("Access specification"), Column("Load"), Column("Side")] + [
        Column(f"m{i}", True) for i in range(13)
    ]
    rows = [Row([Cell(c.title + "-v") for c in cols], "group")]
    t = Table("k", "T", cols, rows, ["the note"])
    parts = column_parts(t)
    assert len(parts) == 2
    assert all(len(p.columns) <= MAX_COLUMNS for p in parts)
    assert all([c.title for c in p.columns[:3]] == ["Access specification", "Load", "Side"] for p in parts)
    assert [c.title for p in parts for c in p.columns[3:]] == [f"m{i}" for i in range(13)]  # all, in order
    assert all([c.text for c in p.rows[0].cells] == [c.title + "-v" for c in p.columns] for p in parts)
    assert parts[0].notes == [] and parts[1].notes == ["the note"]
    assert len(t.columns) == 16  # the table itself is left whole
    markup = table_markup(t)
    assert markup.count("<table") == 2 and markup.count("the note") == 1
    narrow = Table("k", "T", cols[:MAX_COLUMNS], [Row(r.cells[:MAX_COLUMNS]) for r in rows])
    assert column_parts(narrow) == [narrow]


def test_a_long_word_may_break_after_its_commas_and_slashes_only():
    from app.report.pdf_markup import ZWSP, breakable

    opts = "rw,relatime,discard,resv_strict,resuid=65534,resgid=65534"
    assert breakable(opts).replace(ZWSP, "") == opts
    assert breakable(opts).split(ZWSP)[:2] == ["rw,", "relatime,"]
    assert breakable("Random 4k read") == "Random 4k read"  # short words are left alone
    assert breakable("/tmp/pdft/iobw.tst") == "/tmp/pdft/iobw.tst"

"""The report as an Excel workbook, written with the standard library (an .xlsx is a zip of XML parts).

Sheets: Comparison (at a glance, before/after and unmatched tables), Results (per run), Facts (per run),
Charts (the chart data, and a native Excel bar chart per metric drawn from those cells, so the client can
restyle or extend them). Numbers are stored as numbers with display formats; better/worse cells are
coloured. Cells hold inline strings (no shared-string table), which every spreadsheet reads.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape

from app.report.charts import BarChart
from app.report.document import Report
from app.report.tables import Cell, Table, digits_for, excel_format

NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
NS_C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
NS_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
NS_XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
CT = "application/vnd.openxmlformats-officedocument"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

# fonts: 0 normal, 1 bold, 2 title, 3 note, 4 group heading, 5 better, 6 worse
FONTS = ('<font><sz val="10"/><name val="Calibri"/></font>',
         '<font><b/><sz val="10"/><name val="Calibri"/></font>',
         '<font><b/><sz val="13"/><color rgb="FF1D2733"/><name val="Calibri"/></font>',
         '<font><i/><sz val="9"/><color rgb="FF5B6673"/><name val="Calibri"/></font>',
         '<font><b/><sz val="10"/><color rgb="FF1F5FA8"/><name val="Calibri"/></font>',
         '<font><b/><sz val="10"/><color rgb="FF17693A"/><name val="Calibri"/></font>',
         '<font><b/><sz val="10"/><color rgb="FFA8231B"/><name val="Calibri"/></font>')
# fills: 0 none, 1 gray125 (both required first), 2 header, 3 better, 4 worse
FILLS = ('<fill><patternFill patternType="none"/></fill>', '<fill><patternFill patternType="gray125"/></fill>',
         '<fill><patternFill patternType="solid"><fgColor rgb="FFECEFF3"/><bgColor indexed="64"/></patternFill></fill>',
         '<fill><patternFill patternType="solid"><fgColor rgb="FFE3F2E7"/><bgColor indexed="64"/></patternFill></fill>',
         '<fill><patternFill patternType="solid"><fgColor rgb="FFFAE6E3"/><bgColor indexed="64"/></patternFill></fill>')
BORDERS = ('<border><left/><right/><top/><bottom/><diagonal/></border>',
           '<border><left/><right/><top/><bottom style="thin"><color rgb="FF9AA3AD"/></bottom><diagonal/></border>')
KINDS = {"text": (0, 0, 0), "header": (1, 2, 1), "title": (2, 0, 0), "note": (3, 0, 0), "group": (4, 0, 0),
         "better": (5, 3, 0), "worse": (6, 4, 0), "key": (3, 0, 0)}


class _Styles:
    """Cell formats (cellXfs), made on demand from a kind and an Excel number format."""

    def __init__(self) -> None:
        self.formats: dict[str, int] = {}
        self.xfs: dict[tuple[str, str, bool], int] = {("text", "", False): 0}

    def __call__(self, kind: str = "text", number_format: str = "", right: bool = False) -> int:
        key = (kind, number_format, right)
        if key not in self.xfs:
            if number_format and number_format not in self.formats:
                self.formats[number_format] = 164 + len(self.formats)
            self.xfs[key] = len(self.xfs)
        return self.xfs[key]

    def xml(self) -> str:
        fmts = "".join(f'<numFmt numFmtId="{i}" formatCode="{escape(code, {chr(34): "&quot;"})}"/>'
                       for code, i in self.formats.items())  # chr(34): a double quote inside the attribute
        xfs = []
        for kind, code, right in self.xfs:
            font, fill, border = KINDS[kind]
            num = self.formats.get(code, 0)
            applies = ' applyNumberFormat="1"' if num else ""
            applies += ' applyFont="1" applyFill="1" applyBorder="1"'
            inner = ""
            if right:
                applies += ' applyAlignment="1"'
                inner = '<alignment horizontal="right"/>'
            xfs.append(f'<xf numFmtId="{num}" fontId="{font}" fillId="{fill}" borderId="{border}" xfId="0"'
                       f"{applies}>{inner}</xf>")
        return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="{NS_MAIN}">'
                f'<numFmts count="{len(self.formats)}">{fmts}</numFmts>'
                f'<fonts count="{len(FONTS)}">{"".join(FONTS)}</fonts>'
                f'<fills count="{len(FILLS)}">{"".join(FILLS)}</fills>'
                f'<borders count="{len(BORDERS)}">{"".join(BORDERS)}</borders>'
                '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
                f'<cellXfs count="{len(xfs)}">{"".join(xfs)}</cellXfs>'
                '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
                "</styleSheet>")


@dataclass
class _Chart:
    chart: BarChart
    top: int  # 0-based row of the data block's header
    rows: int  # categories
    col: int  # 0-based column where the drawing starts


@dataclass
class _Sheet:
    name: str
    rows: list[list[tuple[object, int]]] = field(default_factory=list)  # (value, style); value None = empty
    widths: dict[int, float] = field(default_factory=dict)
    charts: list[_Chart] = field(default_factory=list)

    def add(self, cells: list[tuple[object, int]]) -> int:
        self.rows.append(cells)
        return len(self.rows) - 1

    def width(self, col: int, text: str) -> None:
        self.widths[col] = min(45.0, max(self.widths.get(col, 8.0), len(text) * 1.1 + 2))


def col_name(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def ref(row: int, col: int, absolute: bool = False) -> str:
    d = "$" if absolute else ""
    return f"{d}{col_name(col)}{d}{row + 1}"


def _cell(c: Cell, styles: _Styles, numeric: bool) -> tuple[object, int]:
    kind = c.mark or "text"
    if isinstance(c.value, int | float) and not isinstance(c.value, bool):
        return c.value, styles(kind, c.number_format, True)
    text = c.value if isinstance(c.value, str) else c.text
    return (text or None), styles(kind, "", numeric)


def put_table(sheet: _Sheet, t: Table, styles: _Styles) -> None:
    grouped = any(r.group for r in t.rows)
    sheet.add([(t.title, styles("title"))])
    head = ([t.group_title] if grouped else []) + [c.title for c in t.columns]
    numeric = ([False] if grouped else []) + [c.numeric for c in t.columns]
    sheet.add([(h, styles("header", "", n)) for h, n in zip(head, numeric, strict=True)])
    for i, h in enumerate(head):
        sheet.width(i, h)
    for r in t.rows:
        cells = ([(r.group_value or r.group, styles("group"))] if grouped else [])
        cells += [_cell(c, styles, col.numeric) for c, col in zip(r.cells, t.columns, strict=True)]
        sheet.add(cells)
        for i, (v, _) in enumerate(cells):
            sheet.width(i, v if isinstance(v, str) else f"{v:,.2f}" if isinstance(v, float) else str(v or ""))
    for n in t.notes:
        sheet.add([(n, styles("note"))])
    sheet.add([])


def put_chart_data(sheet: _Sheet, chart: BarChart, styles: _Styles) -> None:
    values = [v for s in chart.series for v in s.values if v is not None]
    code = excel_format(digits_for(values, {"iops": 0, "mbps": 2}.get(chart.metric.key, 2)))
    top = sheet.add([(chart.title, styles("header"))] + [(s.label, styles("header", "", True)) for s in chart.series])
    for i, cat in enumerate(chart.categories):
        sheet.add([(cat, 0)] + [(s.values[i], styles("text", code, True)) for s in chart.series])
        sheet.width(0, cat)
    for i, s in enumerate(chart.series, 1):
        sheet.width(i, s.label)
    sheet.charts.append(_Chart(chart, top, len(chart.categories), len(chart.series) + 2))
    for _ in range(chart_rows(chart) + 2 - (len(chart.categories) + 1)):  # the drawing is taller than its data
        sheet.add([])


def chart_rows(chart: BarChart) -> int:
    """How many sheet rows a chart's drawing spans (it sits beside its data, the next block below it)."""
    return max(16, len(chart.categories) * len(chart.series) + 8)


def sheet_xml(sheet: _Sheet, drawing_rel: str | None) -> str:
    out = [f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{NS_MAIN}" '
           f'xmlns:r="{NS_REL}"><sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>'
           '<sheetViews><sheetView workbookViewId="0"/></sheetViews><sheetFormatPr defaultRowHeight="14"/>']
    if sheet.widths:
        out.append("<cols>" + "".join(f'<col min="{c + 1}" max="{c + 1}" width="{w:.1f}" customWidth="1"/>'
                                      for c, w in sorted(sheet.widths.items())) + "</cols>")
    out.append("<sheetData>")
    for r, cells in enumerate(sheet.rows):
        parts = []
        for c, (v, style) in enumerate(cells):
            s = f' s="{style}"' if style else ""
            if v is None:
                if style:
                    parts.append(f'<c r="{ref(r, c)}"{s}/>')
            elif isinstance(v, int | float) and not isinstance(v, bool):
                parts.append(f'<c r="{ref(r, c)}"{s}><v>{v!r}</v></c>')
            else:
                parts.append(f'<c r="{ref(r, c)}"{s} t="inlineStr"><is><t xml:space="preserve">'
                             f"{escape(_xml_text(str(v)))}</t></is></c>")
        out.append(f'<row r="{r + 1}">{"".join(parts)}</row>' if parts else f'<row r="{r + 1}"/>')
    out.append("</sheetData>")
    out.append('<pageMargins left="0.6" right="0.6" top="0.7" bottom="0.7" header="0.3" footer="0.3"/>'
               '<pageSetup orientation="landscape" fitToWidth="1" fitToHeight="0"/>')  # printed one page wide
    if drawing_rel:
        out.append(f'<drawing r:id="{drawing_rel}"/>')
    out.append("</worksheet>")
    return "".join(out)


def _xml_text(s: str) -> str:
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "", s)


def _rich(text: str, size: int, bold: bool) -> str:
    return (f'<c:tx><c:rich><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz="{size}" b="{int(bold)}"/></a:pPr>'
            f'<a:r><a:rPr lang="en-US" sz="{size}" b="{int(bold)}"/><a:t>{escape(text)}</a:t></a:r></a:p>'
            "</c:rich></c:tx>")


def chart_xml(ch: _Chart, sheet: str) -> str:
    chart = ch.chart
    q = "'" + sheet.replace("'", "''") + "'"
    first, last = ch.top + 1, ch.top + ch.rows
    cats = "".join(f'<c:pt idx="{i}"><c:v>{escape(c)}</c:v></c:pt>' for i, c in enumerate(chart.categories))
    values = [v for s in chart.series for v in s.values if v is not None]
    code = excel_format(digits_for(values, {"iops": 0, "mbps": 1}.get(chart.metric.key, 2)))
    sers = []
    for i, s in enumerate(chart.series):
        col = i + 1
        pts = "".join(f'<c:pt idx="{k}"><c:v>{v!r}</c:v></c:pt>' for k, v in enumerate(s.values) if v is not None)
        sers.append(
            f'<c:ser><c:idx val="{i}"/><c:order val="{i}"/>'
            f'<c:tx><c:strRef><c:f>{q}!{ref(ch.top, col, True)}</c:f><c:strCache><c:ptCount val="1"/>'
            f'<c:pt idx="0"><c:v>{escape(s.label)}</c:v></c:pt></c:strCache></c:strRef></c:tx>'
            f'<c:spPr><a:solidFill><a:srgbClr val="{s.color.lstrip("#").upper()}"/></a:solidFill></c:spPr>'
            '<c:invertIfNegative val="0"/>'
            f'<c:dLbls><c:numFmt formatCode="{escape(code)}" sourceLinked="0"/><c:spPr><a:noFill/><a:ln><a:noFill/>'
            '</a:ln></c:spPr><c:txPr><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz="800"/></a:pPr>'
            '<a:endParaRPr lang="en-US"/></a:p></c:txPr><c:dLblPos val="outEnd"/><c:showLegendKey val="0"/>'
            '<c:showVal val="1"/><c:showCatName val="0"/><c:showSerName val="0"/><c:showPercent val="0"/>'
            '<c:showBubbleSize val="0"/></c:dLbls>'
            f'<c:cat><c:strRef><c:f>{q}!{ref(first, 0, True)}:{ref(last, 0, True)}</c:f><c:strCache>'
            f'<c:ptCount val="{ch.rows}"/>{cats}</c:strCache></c:strRef></c:cat>'
            f'<c:val><c:numRef><c:f>{q}!{ref(first, col, True)}:{ref(last, col, True)}</c:f><c:numCache>'
            f'<c:formatCode>General</c:formatCode><c:ptCount val="{ch.rows}"/>{pts}</c:numCache></c:numRef></c:val>'
            "</c:ser>")
    better = "higher" if chart.metric.higher_is_better else "lower"
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<c:chartSpace xmlns:c="{NS_C}" '
            f'xmlns:a="{NS_A}" xmlns:r="{NS_REL}"><c:roundedCorners val="0"/><c:chart>'
            f'<c:title>{_rich(chart.title, 1200, True)}<c:overlay val="0"/></c:title>'
            '<c:autoTitleDeleted val="0"/><c:plotArea><c:layout/>'
            '<c:barChart><c:barDir val="bar"/><c:grouping val="clustered"/><c:varyColors val="0"/>'
            f'{"".join(sers)}<c:gapWidth val="60"/><c:axId val="50010"/><c:axId val="50020"/></c:barChart>'
            '<c:catAx><c:axId val="50010"/><c:scaling><c:orientation val="maxMin"/></c:scaling><c:delete val="0"/>'
            '<c:axPos val="l"/><c:numFmt formatCode="General" sourceLinked="0"/><c:majorTickMark val="none"/>'
            '<c:minorTickMark val="none"/><c:tickLblPos val="nextTo"/><c:crossAx val="50020"/>'
            '<c:crosses val="autoZero"/><c:auto val="1"/><c:lblAlgn val="ctr"/><c:lblOffset val="100"/>'
            '<c:noMultiLvlLbl val="0"/></c:catAx>'
            '<c:valAx><c:axId val="50020"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/>'
            '<c:axPos val="b"/><c:majorGridlines><c:spPr><a:ln w="6350"><a:solidFill><a:srgbClr val="E3E6EA"/>'
            f'</a:solidFill></a:ln></c:spPr></c:majorGridlines><c:title>'
            f'{_rich(f"{chart.metric.unit} ({better} is better)", 900, False)}<c:overlay val="0"/></c:title>'
            f'<c:numFmt formatCode="{escape(code)}" sourceLinked="0"/><c:majorTickMark val="out"/>'
            '<c:minorTickMark val="none"/><c:tickLblPos val="nextTo"/><c:crossAx val="50010"/>'
            '<c:crosses val="max"/><c:crossBetween val="between"/></c:valAx></c:plotArea>'
            '<c:legend><c:legendPos val="t"/><c:overlay val="0"/></c:legend><c:plotVisOnly val="1"/>'
            '<c:dispBlanksAs val="gap"/></c:chart></c:chartSpace>')


def drawing_xml(charts: list[_Chart]) -> str:
    anchors = []
    for i, ch in enumerate(charts):
        height = chart_rows(ch.chart)
        anchors.append(
            f'<xdr:twoCellAnchor editAs="oneCell"><xdr:from><xdr:col>{ch.col}</xdr:col><xdr:colOff>0</xdr:colOff>'
            f'<xdr:row>{ch.top}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>{ch.col + 12}</xdr:col>'
            f'<xdr:colOff>0</xdr:colOff><xdr:row>{ch.top + height}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>'
            f'<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="{i + 2}" name="Chart {i + 1}"/>'
            '<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/>'
            f'</xdr:xfrm><a:graphic><a:graphicData uri="{NS_C}"><c:chart xmlns:c="{NS_C}" xmlns:r="{NS_REL}" '
            f'r:id="rId{i + 1}"/></a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/>'
            "</xdr:twoCellAnchor>")
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<xdr:wsDr xmlns:xdr="{NS_XDR}" '
            f'xmlns:a="{NS_A}">{"".join(anchors)}</xdr:wsDr>')


def _rels(items: list[tuple[str, str, str]]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="{t}" Target="{escape(target)}"/>' for i, t, target in items)
    return f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="{NS_PKG_REL}">{body}' \
           "</Relationships>"


def build_sheets(report: Report, styles: _Styles) -> list[_Sheet]:
    sheets = []
    if report.comparisons:
        comp = _Sheet("Comparison")
        m = report.meta
        comp.add([(m.title, styles("title"))])
        for k, v in (("Client", m.client), ("Prepared by", m.author), ("Date", m.date)):
            if v:
                comp.add([(k, styles("key")), (v, 0)])
        comp.add([])
        for diffs, c in zip(report.differences, report.comparisons, strict=True):
            for d in diffs:
                comp.add([(f"Note: {c.candidate.label} and the baseline differ \u2014 {d}", styles("note"))])
        for t in ([report.glance] if report.glance else []) + report.comparison_tables + report.unmatched_tables:
            put_table(comp, t, styles)
        sheets.append(comp)
    results = _Sheet("Results")
    for s in report.runs:
        put_table(results, s.summary, styles)
    facts = _Sheet("Facts")
    for s in report.runs:
        put_table(facts, s.facts, styles)
    sheets += [results, facts]
    if report.charts:
        charts = _Sheet("Charts")
        for ch in report.charts:
            put_chart_data(charts, ch, styles)
        sheets.append(charts)
    return sheets


def write_xlsx(report: Report, path: str | Path) -> None:
    styles = _Styles()
    sheets = build_sheets(report, styles)
    files: dict[str, str] = {}
    overrides = [("/xl/workbook.xml", f"{CT}.spreadsheetml.sheet.main+xml"),
                 ("/xl/styles.xml", f"{CT}.spreadsheetml.styles+xml"),
                 ("/docProps/core.xml", "application/vnd.openxmlformats-package.core-properties+xml"),
                 ("/docProps/app.xml", f"{CT}.extended-properties+xml")]
    chart_no = 0
    drawing_no = 0
    for i, sh in enumerate(sheets, 1):
        drawing_rel = None
        if sh.charts:
            drawing_no += 1
            drawing_rel = "rId1"
            files[f"xl/worksheets/_rels/sheet{i}.xml.rels"] = _rels(
                [("rId1", f"{REL}/drawing", f"../drawings/drawing{drawing_no}.xml")])
            chart_rels = []
            for k, ch in enumerate(sh.charts, 1):
                chart_no += 1
                files[f"xl/charts/chart{chart_no}.xml"] = chart_xml(ch, sh.name)
                overrides.append((f"/xl/charts/chart{chart_no}.xml", f"{CT}.drawingml.chart+xml"))
                chart_rels.append((f"rId{k}", f"{REL}/chart", f"../charts/chart{chart_no}.xml"))
            files[f"xl/drawings/drawing{drawing_no}.xml"] = drawing_xml(sh.charts)
            files[f"xl/drawings/_rels/drawing{drawing_no}.xml.rels"] = _rels(chart_rels)
            overrides.append((f"/xl/drawings/drawing{drawing_no}.xml", f"{CT}.drawing+xml"))
        files[f"xl/worksheets/sheet{i}.xml"] = sheet_xml(sh, drawing_rel)
        overrides.append((f"/xl/worksheets/sheet{i}.xml", f"{CT}.spreadsheetml.worksheet+xml"))
    sheet_list = "".join(f'<sheet name="{escape(s.name)}" sheetId="{i}" r:id="rId{i}"/>'
                         for i, s in enumerate(sheets, 1))
    files["xl/workbook.xml"] = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook '
                                f'xmlns="{NS_MAIN}" xmlns:r="{NS_REL}"><bookViews><workbookView/></bookViews>'
                                f"<sheets>{sheet_list}</sheets></workbook>")
    files["xl/_rels/workbook.xml.rels"] = _rels(
        [(f"rId{i}", f"{REL}/worksheet", f"worksheets/sheet{i}.xml") for i in range(1, len(sheets) + 1)]
        + [(f"rId{len(sheets) + 1}", f"{REL}/styles", "styles.xml")])
    files["xl/styles.xml"] = styles.xml()
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    files["docProps/core.xml"] = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<cp:coreProperties xmlns:cp="http://schemas.'
        'openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        f"<dc:title>{escape(report.meta.title)}</dc:title><dc:creator>{escape(report.meta.author or 'Fiometer')}"
        f'</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">{now}</dcterms:created></cp:coreProperties>')
    files["docProps/app.xml"] = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Properties xmlns="'
                                 'http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
                                 "<Application>Fiometer</Application></Properties>")
    files["_rels/.rels"] = _rels([("rId1", f"{REL}/officeDocument", "xl/workbook.xml"),
                                  ("rId2", f"{NS_PKG_REL}/metadata/core-properties", "docProps/core.xml"),
                                  ("rId3", f"{REL}/extended-properties", "docProps/app.xml")])
    types = "".join(f'<Override PartName="{p}" ContentType="{t}"/>' for p, t in overrides)
    files["[Content_Types].xml"] = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' + types + "</Types>")
    tmp = Path(str(path) + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", files.pop("[Content_Types].xml"))
        for name, text in files.items():
            z.writestr(name, text)
    tmp.replace(path)

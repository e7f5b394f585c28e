"""Reports: tables, charts and facts prepared Qt-free (tables, charts, facts, document), rendered as HTML,
CSV and XLSX without Qt, and as PDF with QtGui painting only (pdf_markup builds its text, pdf paints it)."""

"""The chart kit live Results Display and History share (pyqtgraph): the chart grid and its statistic menus,
many series as one item, step boundaries, the mouse wheel over a chart."""

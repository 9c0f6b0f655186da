"""Item-analysis reports (bot/core/item_stats.py) for people: a text table and PNG charts.

`report_text` is plain Python. The charts are drawn with Pillow (bot/reports/png.py), imported
only when a chart is drawn.
"""

from bot.reports.png import (
    PngCharts,
    chart_drawing,
    chart_png,
    chart_size,
    summary_chart_size,
    summary_drawing,
    summary_png,
)
from bot.reports.text import Scope, report_text

__all__ = ["PngCharts", "Scope", "chart_drawing", "chart_png", "chart_size", "report_text",
           "summary_chart_size", "summary_drawing", "summary_png"]

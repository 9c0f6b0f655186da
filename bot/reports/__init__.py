"""Item-analysis reports (bot/core/analysis.py) for people: a text table and a PNG chart.

`report_text` is plain Python. `chart_png` draws with matplotlib (Agg, no display), imported
only when a chart is drawn, so neither the bot nor `quizbot report` without --png loads it.
"""

from bot.reports.png import PngCharts, chart_png, chart_size, summary_chart_size, summary_png
from bot.reports.text import Scope, report_text

__all__ = ["PngCharts", "Scope", "chart_png", "chart_size", "report_text", "summary_chart_size",
           "summary_png"]

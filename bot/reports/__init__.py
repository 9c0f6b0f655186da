"""Item-analysis reports (bot/core/analysis.py) for people: a text table and a PNG chart.

`report_text` is plain Python. `chart_png` draws with matplotlib (Agg, no display), imported
only when a chart is drawn, so neither the bot nor `quizbot report` without --png loads it.
"""

from bot.reports.png import chart_png, chart_size
from bot.reports.text import Scope, report_text

__all__ = ["Scope", "chart_png", "chart_size", "report_text"]

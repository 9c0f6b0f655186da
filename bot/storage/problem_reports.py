"""What both backends' problem reports (sqlite/problem_reports.py, postgres/problem_reports.py)
share: the columns they read and how a second report of an open one is appended."""

from __future__ import annotations

# a problem report's columns, in ProblemReportRecord's order (both backends read them)
COLUMNS = ("id, quiz_id, question_id, person_key, person_name, chat_key, text, created_at,"
           " updated_at, resolved_at, resolution")


def appended(old: str, new: str, max_chars: int) -> str:
    """The open report's text with a later one on a new line, cut to `max_chars`."""
    text = f"{old}\n{new}"
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"

"""`quizbot content reports`: the problem reports people sent (⚑, /report), and resolving
one. Registered by bot/cli.py; the rules are the core's (bot/core/problem_reports.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.app import open_service
from bot.core.errors import ReportError
from bot.core.ports import ProblemReportRecord
from bot.i18n import translator
from bot.settings import Settings


def add_parser(content: Any) -> None:
    """`reports [--all] [--quiz ID]` and `reports resolve ID [--note TEXT]` under `content`."""
    reports = content.add_parser(
        "reports", help="list the problem reports people sent (⚑, /report), or resolve one"
    )
    reports.add_argument("--all", action="store_true", help="resolved reports too")
    reports.add_argument("--quiz", help="one quiz id (default: every quiz)")
    rsub = reports.add_subparsers(dest="reports_action", metavar="ACTION")
    resolve = rsub.add_parser("resolve", help="mark an open report resolved")
    resolve.add_argument("id", type=int, help="the report's number, as listed")
    resolve.add_argument("--note", help="what was done (kept with the report)")


def when(record: ProblemReportRecord) -> str:
    return record.created_at.strftime("%Y-%m-%d %H:%M UTC")


def report_lines(record: ProblemReportRecord) -> list[str]:
    """One line for the report, then its text indented (an appended report has several)."""
    if record.resolved_at is None:
        state = "open"
    else:
        state = f"resolved {record.resolved_at:%Y-%m-%d %H:%M}"
        if record.resolution:
            state += f": {record.resolution}"
    who = f"{record.person_name} ({record.person_key})" if record.person_name \
        else record.person_key
    lines = [f"#{record.id}  {when(record)}  {record.quiz_id}/{record.question_id}  {who}"
             f" in {record.chat_key}  [{state}]"]
    lines += [f"    {line}" for line in record.text.splitlines()]
    return lines


async def run(settings: Settings, args: argparse.Namespace) -> int:
    async with open_service(settings) as service:
        if getattr(args, "reports_action", None) == "resolve":
            try:
                await service.problem_reports.resolve(args.id, args.note)
            except ReportError as exc:
                print(f"quizbot: {exc}", file=sys.stderr)
                return 1
            print(f"report #{args.id} resolved")
            return 0
        records = await service.problem_reports.list(open_only=not args.all, quiz_id=args.quiz)
        if not records and args.quiz is not None and service.catalog.get(args.quiz) is None:
            print(f"quizbot: no quiz {args.quiz!r} in {settings.quizbot_content_dir}",
                  file=sys.stderr)
            return 1
    if not records:
        print("no problem reports" if args.all else "no open problem reports")
        return 0
    for record in records:
        print("\n".join(report_lines(record)))
    opened = sum(r.resolved_at is None for r in records)
    print(translator("en").ngettext("{n} report, {open} open", "{n} reports, {open} open",
                                    len(records), open=opened))
    return 0

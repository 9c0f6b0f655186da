"""Daily schedules as values: parsing, when the next post is due, day streaks. Pure, no I/O.

A schedule posts once per *local calendar day* of its time zone. The day, not the instant, is
the unit of "exactly once": the database holds one claim per (chat, local date), so a restart,
a second process or a daylight-saving change cannot post twice, and a bot that was down at the
scheduled minute still posts later that same local day.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, time, timedelta
from functools import cache
from zoneinfo import available_timezones

from bot.core.errors import BadZone, ScheduleError
from bot.core.models import Schedule as Schedule  # the value, re-exported with its parsers
from bot.i18n import _

SUGGESTIONS = 5  # zones offered after one that does not exist
_TIME = re.compile(r"^(?P<h>[01]?\d|2[0-3])[:.](?P<m>[0-5]\d)$")


def parse_time(text: str) -> time:
    match = _TIME.match(text.strip())
    if match is None:
        raise ScheduleError(
            _("“{text}” is not a time: use HH:MM, 24-hour, e.g. 09:30 or 18:05"), text=text
        )
    return time(int(match["h"]), int(match["m"]))


def parse_zone(text: str | None) -> str:
    """An IANA zone name, matched regardless of case ("asia/kolkata" → "Asia/Kolkata")."""
    if not text:
        return "UTC"
    name = text.strip()
    if name in _zones():
        return name
    folded = {zone.lower(): zone for zone in _zones()}
    if (match := folded.get(name.lower())) is not None:
        return match
    # typed instead of picked: "Kolkata" suggests Asia/Kolkata (matched on the last part)
    needle = name.rsplit("/", 1)[-1]
    raise BadZone(name, zone_names(needle, SUGGESTIONS) if len(needle) >= 3 else ())


@cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def zone_names(prefix: str = "", limit: int = 25) -> list[str]:
    """Time zones for autocomplete: names containing `prefix`, case-insensitive."""
    needle = prefix.strip().lower().replace(" ", "_")
    names = sorted(n for n in _zones() if "/" in n or n == "UTC")
    return [n for n in names if needle in n.lower()][:limit]


def day_streaks(days: Iterable[date], latest: date | None) -> tuple[int, int]:
    """(current, best) runs of consecutive local days with a correct daily answer.

    `latest` is the newest daily question the person could have answered; the current run
    stays alive through it (today's question may still be open) and breaks on a missed day.
    """
    ordered = sorted(set(days))
    best = run = 0
    previous: date | None = None
    for day in ordered:
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        best = max(best, run)
        previous = day
    if not ordered or latest is None:
        return 0, best
    last = ordered[-1]
    current = run if (latest - last).days <= 1 else 0
    return current, best

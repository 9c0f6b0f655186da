"""Daily schedules as values: parsing, when the next post is due, day streaks. Pure, no I/O.

A schedule posts once per *local calendar day* of its time zone. The day, not the instant, is
the unit of "exactly once": the database holds one claim per (chat, local date), so a restart,
a second process or a daylight-saving change cannot post twice, and a bot that was down at the
scheduled minute still posts later that same local day.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from bot.core.errors import BadZone, ScheduleError
from bot.i18n import _

SUGGESTIONS = 5  # zones offered after one that does not exist
_TIME = re.compile(r"^(?P<h>[01]?\d|2[0-3])[:.](?P<m>[0-5]\d)$")


@dataclass(frozen=True, slots=True)
class Schedule:
    chat_key: str
    at: time  # local wall-clock time
    tz: str  # IANA zone name
    selector: str | None = None  # quiz id or tag to draw from; None: every quiz
    open_minutes: int | None = None  # None: open until the next daily question
    updated_at: datetime | None = None  # when it was set; no post for earlier moments

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    def local_date(self, now: datetime) -> date:
        return now.astimezone(self.zone).date()

    def moment(self, day: date) -> datetime:
        """The UTC instant of this schedule on a local date.

        A wall time skipped by a spring-forward change resolves to the instant just after the
        gap (zoneinfo's fold=0 rule, e.g. 02:30 → 03:30 new time); a time repeated in autumn
        takes its first occurrence. Either way there is exactly one moment per local day.
        """
        local = datetime.combine(day, self.at, tzinfo=self.zone)
        return local.astimezone(UTC)

    def due_day(self, now: datetime) -> date | None:
        """The local date whose post is due at `now` (it may already have been posted)."""
        today = self.local_date(now)
        moment = self.moment(today)
        if now < moment:
            return None
        if self.updated_at is not None and moment < self.updated_at:
            return None  # set after today's moment: the first post is tomorrow
        return today

    def next_moment(self, now: datetime, posted_today: bool) -> datetime:
        today = self.local_date(now)
        day = today
        if posted_today or (self.due_day(now) is None and now >= self.moment(today)):
            day = today + timedelta(days=1)
        return self.moment(day)


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

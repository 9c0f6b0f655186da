"""Which word is which in `/daily HH:MM [Time/Zone] [quiz]`, and /daily's usage line.

Telegram commands are free words, so the time zone and the quiz have to be told apart here.
Whether the time, the zone or the quiz is valid is the core's to say (set_schedule raises
ScheduleError, BadZone or UnknownQuiz, rendered by the error handler): nothing is checked here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.core.errors import BadZone
from bot.core.schedule import parse_zone
from bot.i18n import Translator

OFF_WORDS = frozenset({"off", "stop", "none"})


@dataclass(frozen=True, slots=True)
class DailyWords:
    at: str
    zone: str | None
    selector: str | None


def split_daily(args: Sequence[str], is_selector: Callable[[str], bool]) -> DailyWords:
    """`args` after "/daily" (not empty, not "off"): the time, then a zone if the next word
    has a slash or names (or nearly names) a zone and the rest is not a quiz or topic, then
    the quiz."""
    at, rest = args[0], list(args[1:])
    zone: str | None = None
    if rest and ("/" in rest[0] or (not is_selector(" ".join(rest)) and _names_a_zone(rest[0]))):
        zone, rest = rest[0], rest[1:]
    return DailyWords(at, zone, " ".join(rest) or None)


def _names_a_zone(word: str) -> bool:
    """"utc", "Asia/Kolkata", or "Kolkata" (a typo the core will suggest a zone for)."""
    try:
        parse_zone(word)
    except BadZone as exc:
        return bool(exc.suggestions)
    return True


def usage_text(t: Translator) -> str:
    return "\n".join([
        t.gettext("Usage: /daily HH:MM [Time/Zone] [quiz], e.g. /daily 09:00 Asia/Kolkata"),
        t.gettext("/daily off stops it; /daily shows it."),
    ])

"""Reading `/daily HH:MM [Time/Zone] [quiz]` and the replies that are Telegram's own.

The schedule's rules (valid times and zones, exactly once a day) are the core's; this module
only works out which word is which, so that a bad time, an unknown zone and an unknown quiz
each get their own clear answer before anything changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.core.schedule import ScheduleError, parse_time, parse_zone, zone_names
from bot.i18n import Translator

OFF_WORDS = frozenset({"off", "stop", "none"})
SUGGESTIONS = 5


@dataclass(frozen=True, slots=True)
class DailyRequest:
    at: str
    zone: str | None  # a canonical IANA name, or None for UTC
    selector: str | None


@dataclass(frozen=True, slots=True)
class BadTime:
    text: str


@dataclass(frozen=True, slots=True)
class BadZone:
    text: str
    suggestions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UnknownSelector:
    text: str


Parsed = DailyRequest | BadTime | BadZone | UnknownSelector


def canonical_zone(text: str) -> str | None:
    """The IANA name for `text`, forgiving case ("asia/kolkata", "utc"); None if unknown."""
    name = text.strip()
    try:
        return parse_zone(name)
    except ScheduleError:
        pass
    lowered = name.lower()
    return next((z for z in zone_names(name, limit=10_000) if z.lower() == lowered), None)


def parse_daily(args: Sequence[str], is_selector: Callable[[str], bool]) -> Parsed:
    """`args` after "/daily" (not empty, not "off"). A word with a slash, or a zone name that
    is not also a quiz or topic, is the time zone; whatever follows is the quiz."""
    at, rest = args[0], list(args[1:])
    try:
        parse_time(at)
    except ScheduleError:
        return BadTime(at)
    zone: str | None = None
    if rest:
        first = rest[0]
        selector_words = " ".join(rest)
        if "/" in first or (not is_selector(selector_words) and (
            canonical_zone(first) is not None or _suggest(first)
        )):
            zone = canonical_zone(first)
            if zone is None:
                return BadZone(first, _suggest(first))
            rest = rest[1:]
    selector = " ".join(rest) or None
    if selector is not None and not is_selector(selector):
        return UnknownSelector(selector)
    return DailyRequest(at, zone, selector)


def _suggest(text: str) -> tuple[str, ...]:
    # "Kolkata" -> Asia/Kolkata; a name with a region part is matched on its last part
    needle = text.strip().rsplit("/", 1)[-1]
    if len(needle) < 3:
        return ()
    return tuple(zone_names(needle, limit=SUGGESTIONS))


def usage_text(t: Translator) -> str:
    return "\n".join([
        t.gettext("Usage: /daily HH:MM [Time/Zone] [quiz], e.g. /daily 09:00 Asia/Kolkata"),
        t.gettext("/daily off stops it; /daily shows it."),
    ])


def problem_text(problem: BadTime | BadZone, t: Translator) -> str:
    if isinstance(problem, BadTime):
        text = t.gettext("“{text}” is not a time: use HH:MM, 24-hour, e.g. 09:30 or 18:05",
                         text=problem.text)
    else:
        text = t.gettext(
            "“{name}” is not a time zone: use an IANA name such as Asia/Kolkata or Asia/Dhaka",
            name=problem.text,
        )
        if problem.suggestions:
            text += "\n" + t.gettext("Did you mean: {zones}?",
                                     zones=", ".join(problem.suggestions))
    return text + "\n" + t.gettext("Nothing was changed.") + "\n\n" + usage_text(t)

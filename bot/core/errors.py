"""The one error vocabulary: what a person did that the bot refuses, as a message id and values.

Adapters never word an error themselves: they catch UserError and show
`render.error_text(error, t, quizzes)` in the reader's language (Telegram's error handler,
Discord's tree and view error hooks, the console). The msgids are marked for extraction here.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.models import QuizInfo
from bot.i18n import LANGUAGE_NAMES, _


class UserError(Exception):
    """Refused, and nothing was changed. `template` is an English msgid with {placeholders}."""

    def __init__(self, template: str, **values: object) -> None:
        super().__init__(template.format(**values))
        self.template = template
        self.values = values


class UnknownQuiz(UserError):
    """No quiz or topic has that name; the reply lists what exists."""

    def __init__(self, selector: str, available: Sequence[QuizInfo] = ()) -> None:
        super().__init__(_("There is no quiz or topic called “{name}”."), name=selector)
        self.selector = selector
        self.available = list(available)


class NoActiveRun(UserError):
    def __init__(self) -> None:
        super().__init__(_("You have no unfinished quiz. Start one with /quiz and pick a quiz."))


class UnsupportedLocale(UserError):
    def __init__(self, code: str) -> None:
        choices = ", ".join(f"{code} ({name})" for code, name in LANGUAGE_NAMES.items())
        super().__init__(_("I don't speak “{code}”. Choose one of: {choices}."), code=code,
                         choices=choices)
        self.code = code


class BadPeriod(UserError):
    def __init__(self, text: str) -> None:
        super().__init__(_("“{text}” is not a period: choose day, week or all."), text=text)


class NotAllowed(UserError):
    """Only the chat's admins (or, in a private chat, its one person) may do this."""


class ScheduleError(UserError):
    """A bad time, zone or open time for a daily question."""


class BadZone(ScheduleError):
    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        super().__init__(
            _("“{name}” is not a time zone: use an IANA name such as Asia/Kolkata or "
              "Asia/Dhaka"), name=name,
        )
        self.suggestions = tuple(suggestions)


def may_not_change_daily() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can change its daily question."))


def may_not_change_language() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can change its language."))

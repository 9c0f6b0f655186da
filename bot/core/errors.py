"""The one error vocabulary: what a person did that the bot refuses, as a message id and values.

Adapters never word an error themselves: they catch UserError and show
`render.error_text(error, t, quizzes)` in the reader's language (Telegram's error handler,
Discord's tree and view error hooks, the console). The msgids are marked for extraction here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


# rounds and chat settings ------------------------------------------------------------------
MAX_ROUND = 20  # questions in one round
MIN_QUESTION_SECONDS = 10
# A Telegram quiz poll's open_period allows 5..2,628,000 s since Bot API 9.6 (600 before);
# Discord has no such bound (the core closes its questions), so the strictest platform sets it.
MAX_QUESTION_SECONDS = 2_628_000


class BadCount(UserError):
    def __init__(self, text: object) -> None:
        super().__init__(_("A round has 1 to {most} questions, not “{text}”."),
                         most=MAX_ROUND, text=text)


class SettingsError(UserError):
    """A bad /settings: raised as is for a word that names no setting."""


class BadQuestionTime(SettingsError):
    def __init__(self, text: object) -> None:
        super().__init__(
            _("A question is open for {least} seconds to 30 days (/settings time 90, 10m, "
              "2h or 3d), not “{text}”."),
            least=MIN_QUESTION_SECONDS, text=text,
        )


class BadMode(SettingsError):
    def __init__(self, text: str) -> None:
        super().__init__(_("“{text}” is not a mode: choose polls or buttons."), text=text)


class BadPeerThreshold(SettingsError):
    def __init__(self, text: str) -> None:
        super().__init__(_("“{text}” is not a share of right first votes: /settings peer 1 to "
                           "100 (percent)."), text=text)


class BadDiscussion(SettingsError):
    def __init__(self, text: str) -> None:
        super().__init__(_("“{text}” is not a discussion time: /settings discussion 1 to 15 "
                           "(minutes), or 30s to 900s."), text=text)


class BadChart(SettingsError):
    def __init__(self, text: str) -> None:
        super().__init__(_("“{text}” is neither on nor off: /settings chart on or off."),
                         text=text)


class BadAsker(SettingsError):
    def __init__(self, text: str) -> None:
        super().__init__(_("“{text}” is not who may ask: /settings quiz admins or anyone."),
                         text=text)


def bad_setting(text: str) -> SettingsError:
    return SettingsError(
        _("“{text}” is not a setting: use time SECONDS, mode polls|buttons, chart on|off, "
          "quiz admins|anyone, peer PERCENT, discussion MINUTES or confidence on|off."),
        text=text,
    )


def may_not_ask() -> NotAllowed:
    return NotAllowed(_("In this chat only admins start questions and rounds."))


class StillOpen(UserError):
    """A member's /quiz while the chat's question is open (or its round runs): the open one
    is pointed at, nothing is closed. `post_id` and `refs` say where it is (None and () for
    a round between two questions)."""

    def __init__(self, prompt: str | None, post_id: int | None = None,
                 refs: tuple[str, ...] = ()) -> None:
        if prompt is None:
            super().__init__(_("A round is running here; only admins can end it early."))
        else:
            super().__init__(_("This question is still open: “{prompt}”. Answer it first; "
                               "only admins can replace it before its time."), prompt=prompt)
        self.post_id = post_id
        self.refs = refs


def may_not_see_analysis() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can see its item analysis."))


def may_not_change_settings() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can change its settings."))


def may_not_open_dashboard() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can open its dashboard."))


class DashboardOff(UserError):
    def __init__(self) -> None:
        super().__init__(_("The web dashboard is not switched on for this bot."))


# problem reports ----------------------------------------------------------------------------
MAX_REPORT_CHARS = 1000  # what a person writes in one report (Telegram 4096, Discord 4000)
DAILY_REPORTS = 10  # new reports one person may make in 24 hours


class ReportError(UserError):
    """A problem report refused: nothing was stored."""


@dataclass(frozen=True, slots=True)
class Msgid:
    """A value of an error that is itself a message (a platform's command syntax), translated
    when the error is shown; English in str()."""

    text: str

    def __str__(self) -> str:
        return self.text


class UnknownQuestion(ReportError):
    """`nearest`: question ids close to the one typed; `last`: the last question the person
    answered in the chat (offered when none is close)."""

    def __init__(self, question_id: str, nearest: Sequence[str] = (),
                 last: str | None = None) -> None:
        super().__init__(_("There is no question “{id}” to report."), id=question_id[:60])
        self.nearest = tuple(nearest)
        self.last = last


def empty_report(usage: str) -> ReportError:
    return ReportError(_("Say what is wrong with the question: {usage}"), usage=Msgid(usage))


def report_too_long(length: int) -> ReportError:
    return ReportError(_("A report has at most {most} characters, not {length}."),
                       most=MAX_REPORT_CHARS, length=length)


def too_many_reports(most: int = DAILY_REPORTS) -> ReportError:
    return ReportError(_("You have sent {most} reports today. Thank you: please wait until "
                         "tomorrow for more."), most=most)


def nothing_to_report(usage: str) -> ReportError:
    return ReportError(_("Which question? You have answered none here yet: {usage}"),
                       usage=Msgid(usage))


def may_not_see_reports() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can read and resolve its reports."))


class UnknownReport(ReportError):
    def __init__(self, report_id: int | str) -> None:
        super().__init__(_("There is no report {id}."), id=report_id)


class AlreadyResolved(ReportError):
    def __init__(self, report_id: int) -> None:
        super().__init__(_("Report {id} is resolved already."), id=report_id)
# authoring (authoring.py) ------------------------------------------------------------------
class AuthoringError(UserError):
    """A quiz poll or a draft command refused; nothing was stored."""


def not_an_author(person_key: str) -> AuthoringError:
    # i18n: QUIZBOT_AUTHORS is a setting's name: keep it as it is
    return AuthoringError(_(
        "Only the bot's authors can write quizzes here; nothing was saved. To become one, ask "
        "the bot's operator to add your id {id} to QUIZBOT_AUTHORS."), id=author_entry(person_key))


def author_entry(person_key: str) -> str:
    """How QUIZBOT_AUTHORS names a person: a Telegram id bare (its default platform), others
    with their prefix."""
    return person_key.removeprefix("tg:")


def not_a_quiz() -> AuthoringError:
    return AuthoringError(_(
        "That is a regular poll. Send a quiz instead: create a poll, turn on “Quiz mode” "
        "and mark the right answer."))


def no_right_option() -> AuthoringError:
    return AuthoringError(_(
        "I cannot see which option is right (a forwarded poll hides it). Create the quiz "
        "here yourself and mark the right answer."))


def picture_too_big(limit_mib: int) -> AuthoringError:
    return AuthoringError(_(
        "That picture is too large: at most {limit} MiB and 4096×4096 pixels. Send a smaller "
        "one; nothing changed."), limit=limit_mib)


def not_a_picture() -> AuthoringError:
    return AuthoringError(_(
        "That file is not a picture I can use: send a photo, or a PNG or JPEG file. Nothing "
        "changed."))


def no_draft() -> AuthoringError:
    return AuthoringError(_("You have no draft. Send me a quiz poll, or /newpack to start one."))


def empty_draft() -> AuthoringError:
    return AuthoringError(_("Your draft has no questions yet: send me quiz polls."))


def untitled_draft() -> AuthoringError:
    return AuthoringError(_("Name your draft first: /name followed by its title."))


def pack_exists(quiz_id: str) -> AuthoringError:
    return AuthoringError(_(
        "There is already a quiz “{id}”. Choose another title with /name, or another id: "
        "/publish followed by the id, e.g. /publish {id}-2"), id=quiz_id)


def title_taken(title: str, quiz_id: str) -> AuthoringError:
    return AuthoringError(_(
        "There is already a quiz called “{title}” ({id}). Choose another title with /name."),
        title=title, id=quiz_id)


def pack_id_needed() -> AuthoringError:
    return AuthoringError(_(
        "I cannot make a quiz id from this title. Choose one: /publish followed by the id, "
        "in lowercase Latin letters, digits and hyphens, e.g. /publish my-quiz"))


def bad_pack_id(text: str) -> AuthoringError:
    return AuthoringError(_(
        "“{id}” cannot be a quiz id: use 3 to 40 lowercase Latin letters, digits and hyphens, "
        "e.g. my-quiz"), id=text)


def not_published_here(quiz_id: str) -> AuthoringError:
    return AuthoringError(_(
        "“{id}” is not a quiz published in a chat: only those can be withdrawn."), id=quiz_id)


def not_your_pack(quiz_id: str) -> AuthoringError:
    return AuthoringError(_("Only the author who published “{id}” can withdraw it."),
                          id=quiz_id)


def unpublish_what() -> AuthoringError:
    return AuthoringError(_("Which quiz? /unpublish followed by its id, e.g. /unpublish my-quiz"))

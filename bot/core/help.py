"""/help and the welcome a chat gets when the bot joins it: which commands a person may use
where they ask, and which quizzes there are, in the reader's language.

Each platform lists its own commands (their syntax differs: `/report <question id> …` on
Telegram, `/report question: …` on Discord) as `Entry`s; which of them a person sees is decided
here, once: admin commands only for those who may manage the chat (in a private chat, its
person), group-only commands only in a shared chat, private-only ones only in a private chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from bot.core.models import QuizInfo
from bot.i18n import Translator


class Where(Enum):
    ANYWHERE = "anywhere"
    PRIVATE = "private"  # a private chat or DM with the bot
    SHARED = "shared"  # a group or a server channel


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of /help: `text` is a msgid ("/stats — your answers …")."""

    text: str
    where: Where = Where.ANYWHERE
    admin: bool = False


def visible(entries: Sequence[Entry], *, private: bool, admin: bool) -> list[Entry]:
    """The commands this person may use in this chat."""
    place = Where.PRIVATE if private else Where.SHARED
    return [e for e in entries
            if e.where in (Where.ANYWHERE, place) and (admin or not e.admin)]


def quiz_lines(quizzes: Sequence[QuizInfo], t: Translator, start: str) -> list[str]:
    """The quizzes with their ids; `start`: a msgid, how a quiz is started by its id there."""
    return [t.gettext("Quizzes (start one with {start}):", start=t.gettext(start))] + [
        "• " + t.ngettext("{id} — {title} ({n} question)", "{id} — {title} ({n} questions)",
                          q.questions, id=q.id, title=q.title)
        for q in quizzes
    ]


def help_text(entries: Sequence[Entry], quizzes: Sequence[QuizInfo], t: Translator, *,
              private: bool, admin: bool, start: str) -> str:
    """`start`: a msgid, how a quiz is started by its id on this platform."""
    shown = visible(entries, private=private, admin=admin)
    lines = [
        t.gettext("I ask short multiple-choice questions about ML training. The answer and "
                  "its explanation appear as soon as you answer."),
        "",
        t.gettext("Commands you can use here:"),
        *(t.gettext(e.text) for e in shown if not e.admin),
    ]
    if any(e.admin for e in shown):
        lines += ["", t.gettext("For admins:"), *(t.gettext(e.text) for e in shown if e.admin)]
    return "\n".join([*lines, "", *quiz_lines(quizzes, t, start)])


def welcome_text(quizzes: Sequence[QuizInfo], t: Translator, *, start: str,
                 help_command: str = "/help") -> str:
    """Said once when the bot is added to a group or a server. `start`: a msgid, how a quiz
    is started by its id there."""
    return "\n".join([
        t.gettext("Hello! I ask short multiple-choice questions about ML training; everyone "
                  "here can answer, and the answer comes with its explanation."),
        t.gettext("Ask one with {command}; {help} lists every command.", command="/quiz",
                  help=help_command),
        "",
        *quiz_lines(quizzes, t, start),
    ])

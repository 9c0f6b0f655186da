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
              private: bool, admin: bool, start: str, tap: bool = False,
              more: str | None = None) -> str:
    """`start`: a msgid, how a quiz is started by its id on this platform; `tap`: the
    quizzes come as buttons under the text (one line says so instead of listing them);
    `more`: a msgid, how the admins' commands left out here are asked for."""
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
    elif more is not None and any(e.admin for e in visible(entries, private=private,
                                                          admin=True)):
        lines += ["", t.gettext(more)]
    return "\n".join([*lines, "", *quiz_part(quizzes, t, start, tap)])


def quiz_part(quizzes: Sequence[QuizInfo], t: Translator, start: str, tap: bool) -> list[str]:
    if tap and quizzes:
        return [t.gettext("Tap a quiz below to start it, or type {start}.",
                          start=t.gettext(start))]
    return quiz_lines(quizzes, t, start)


def welcome_text(quizzes: Sequence[QuizInfo], t: Translator, *, start: str,
                 help_command: str = "/help", tap: bool = False) -> str:
    """Said once when the bot is added to a group or a server. `start`: a msgid, how a quiz
    is started by its id there; `tap`: the quizzes come as buttons under it."""
    return "\n".join([
        t.gettext("Hello! I ask short multiple-choice questions about ML training; everyone "
                  "here can answer, and the answer comes with its explanation."),
        t.gettext("Ask one with {command}; {help} lists every command.", command="/quiz",
                  help=help_command),
        "",
        *quiz_part(quizzes, t, start, tap),
    ])


def start_text(t: Translator, *, help_command: str = "/help") -> str:
    """The first words in a private chat with the bot: short, the quizzes as buttons under
    it (the whole /help, with what admins use in groups, is one command away)."""
    return "\n".join([
        t.gettext("Hello! I ask short multiple-choice questions about ML training, with the "
                  "answer and its explanation as soon as you answer."),
        t.gettext("Tap a quiz below to take it, one question after another; /quiz asks a "
                  "single question; {help} lists every command.", help=help_command),
    ])

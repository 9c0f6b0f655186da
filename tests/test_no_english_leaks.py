"""No English in the Bengali and Hindi interface: every message of the catalog, and the longer
replies built from them (/help on both platforms, the welcome, /reports), rendered in bn and
hi, has no Latin word but the commands and what a person types as it is (option names and
values, time formats), names of platforms and keys, and technical terms."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

import pytest
from babel.messages.pofile import read_po

from bot.adapters.discord.help import ENTRIES as DISCORD_HELP
from bot.adapters.discord.help import START as DISCORD_START
from bot.adapters.discord.reports import RESOLVE_HINT as DISCORD_RESOLVE
from bot.adapters.telegram.help import ENTRIES as TELEGRAM_HELP
from bot.adapters.telegram.help import START as TELEGRAM_START
from bot.adapters.telegram.reports import RESOLVE_HINT as TELEGRAM_RESOLVE
from bot.core.help import help_text, welcome_text
from bot.core.problem_reports import report_list_text
from bot.i18n import LOCALE_DIR, Translator

LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
# /quiz, /settings-এর, and the subcommands: /daily set, /lang chat, /reports resolve,
# /mydata delete, /review export, /review-export, /dashboard revoke
COMMAND = re.compile(
    r"/[a-z]+(?:-[a-z]+)?(?: (?:set|off|status|chat|resolve|delete|export|revoke)\b)?")
OPTION = re.compile(r"\b[a-z_]+:")  # a Discord option name: "quiz:", "run:"
# typed as they are, names, keys, technical terms
ALLOWED = frozenset({
    # what a person types: languages, periods, modes, switches, formats, a boolean option
    "en", "bn", "hi", "auto", "day", "week", "all", "polls", "buttons", "on", "off",
    "default", "time", "mode", "chart", "channel", "True", "HH", "MM", "N", "y",
    "quiz", "admins", "anyone", "teams", "speed", "peer", "discussion", "choose", "confidence",
    "target", "admin",
    "s", "m", "h", "d",  # seconds, minutes, hours, days as typed: 90s, 10m, 2h, 3d
    # time zones
    "Asia", "Kolkata", "Dhaka", "UTC", "IANA",
    # platforms, the platform's own labels, keys, the field
    "Telegram", "Discord", "Quiz", "Start", "Ctrl", "D", "ML", "quizbot", "JSON",
    # the flashcard app the review deck opens in; the example quiz id an author may type
    "Anki", "my",
    # the dashboard's file formats (its exports); the pictures an author may send, their cap
    "CSV", "Excel", "PNG", "JPEG", "MiB",
    # the setting an operator puts a person's id in (/whoami, the authors' refusal)
    "QUIZBOT", "AUTHORS",
    # /question's kinds and form values as typed (authoring_form.py), its example unit, and
    # the example of an answer spelled in Latin letters (what "latin:" is for)
    "choice", "multi", "true", "false", "min", "max", "GB", "punargonona",
})
# a value for every placeholder that adds no Latin letter of its own
FILLER = "০"


def leaks(text: str) -> list[str]:
    bare = OPTION.sub(" ", COMMAND.sub(" ", text))
    return [w.strip("'") for w in LATIN_WORD.findall(bare) if w.strip("'") not in ALLOWED]


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def catalog_texts(t: Translator) -> Iterator[tuple[str, str]]:
    """Every msgid of the template, rendered in `t`'s language (plurals for 1, 2 and 5)."""
    with (LOCALE_DIR / "quizbot.pot").open("rb") as fh:
        template = read_po(fh)
    for message in template:
        if not message.id:
            continue
        if not isinstance(message.id, str):  # pluralizable: (singular, plural)
            singular, plural = message.id[0], message.id[1]
            values = {k: FILLER for k in placeholders(plural) - {"n"}}
            for n in (1, 2, 5):
                yield singular, t.ngettext(singular, plural, n, **values)
        else:
            values = {k: FILLER for k in placeholders(message.id)}
            yield message.id, t.gettext(message.id, **values) if values \
                else t.gettext(message.id)


def replies(t: Translator) -> Iterator[tuple[str, str]]:
    for platform, entries, start in (("telegram", TELEGRAM_HELP, TELEGRAM_START),
                                     ("discord", DISCORD_HELP, DISCORD_START)):
        for private in (True, False):
            yield f"{platform} help", help_text(entries, (), t, private=private, admin=True,
                                                start=start)
        yield f"{platform} welcome", welcome_text((), t, start=start)
    for hint in (TELEGRAM_RESOLVE, DISCORD_RESOLVE):
        yield "no reports", report_list_text((), t, {}, hint)


@pytest.mark.parametrize("locale", ["bn", "hi"])
def test_bengali_and_hindi_texts_have_no_english_words(locale: str) -> None:
    t = Translator(locale)
    found = {name: words for name, text in [*catalog_texts(t), *replies(t)]
             if (words := leaks(text))}
    assert found == {}


def test_the_scan_finds_an_english_word() -> None:
    assert leaks("/settings time <সেকেন্ড> — এগুলো বদলান") == []
    assert leaks("অ্যাডমিনরা (Manage Server) /settings") == ["Manage", "Server"]
    assert leaks("/remind HH:MM [Time/Zone]") == ["Time", "Zone"]

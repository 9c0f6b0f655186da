"""Interface strings through gettext catalogs, with CLDR plurals and number formats (Babel).

Catalogs are `.po` files under `locales/<code>/LC_MESSAGES/quizbot.po`, compiled by Babel
(`python scripts/i18n.py`) to the `quizbot.mo` beside each, which the standard library's
gettext reads when a locale is first spoken: reading the `.po` itself would keep Babel's
message machinery and the locale's data in the bot's process (about 3.5 MB). The `.mo` files
are tracked, and `scripts/i18n.py --check` (run by the tests) fails when one is stale.
English is the source language (the msgids); a string missing from a catalog falls back to
English, never to a blank: so does a fuzzy entry (not yet reviewed), a plural entry with an
empty form (both left out of the `.mo`), and a translation whose placeholders do not fit the
values (a typo in one language must not break the message).

`python scripts/i18n.py` refreshes the catalogs from the code; `--check` reports gaps.
"""

from __future__ import annotations

import logging
import struct
from functools import cache
from gettext import GNUTranslations, NullTranslations
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.numbers import format_decimal, format_percent

from bot.content.items import DEFAULT_LOCALE, LOCALES

log = logging.getLogger(__name__)

LOCALE_DIR = Path(__file__).parent / "locales"
DOMAIN = "quizbot"

# Names shown in /lang menus, each in its own language.
LANGUAGE_NAMES = {"en": "English", "bn": "বাংলা", "hi": "हिन्दी"}


def normalize(tag: str | None) -> str | None:
    """Map a platform tag ("en-US", "hi", "bn_BD", "EN") to a supported locale, or None."""
    if not tag:
        return None
    base = tag.replace("_", "-").split("-")[0].lower()
    return base if base in LOCALES else None


def catalog_path(locale: str) -> Path:
    return LOCALE_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


def compiled_path(locale: str) -> Path:
    return catalog_path(locale).with_suffix(".mo")


@cache
def _translations(locale: str) -> NullTranslations:
    if locale == DEFAULT_LOCALE:
        return NullTranslations()
    path = compiled_path(locale)
    try:
        with path.open("rb") as fh:
            return GNUTranslations(fh)
    except (OSError, ValueError, struct.error) as exc:  # missing or broken
        if catalog_path(locale).exists():
            log.error("%s: %s; %s is spoken in English until it is compiled "
                      "(python scripts/i18n.py)", path.name, exc, locale)
        return NullTranslations()


class Translator:
    """Everything an adapter needs to speak one locale."""

    def __init__(self, locale: str) -> None:
        self.locale = normalize(locale) or DEFAULT_LOCALE
        self._t = _translations(self.locale)
        try:
            self._babel_locale = Locale.parse(self.locale)
        except (UnknownLocaleError, ValueError):
            self._babel_locale = Locale.parse(DEFAULT_LOCALE)

    def gettext(self, message: str, **values: object) -> str:
        text = self._t.gettext(message)
        if not values:
            return text
        try:
            return text.format(**values)
        except (KeyError, IndexError, ValueError):
            if text == message:
                raise  # the English text itself is wrong: the caller's bug
            log.error("%s translation of %r does not fit its values; English used",
                      self.locale, message)
            return message.format(**values)

    def ngettext(self, singular: str, plural: str, n: int, **values: object) -> str:
        text = self._t.ngettext(singular, plural, n)
        number = self.number(n)
        try:
            return text.format(n=number, **values)
        except (KeyError, IndexError, ValueError):
            english = singular if n == 1 else plural
            if text == english:
                raise
            log.error("%s translation of %r does not fit its values; English used",
                      self.locale, singular)
            return english.format(n=number, **values)

    def number(self, value: float) -> str:
        return format_decimal(value, locale=self._babel_locale)

    def percent(self, share: float) -> str:
        return format_percent(share, locale=self._babel_locale)


@cache
def translator(locale: str | None) -> Translator:
    return Translator(locale or DEFAULT_LOCALE)


def _(message: str) -> str:
    """Mark a string for extraction without translating it here."""
    return message

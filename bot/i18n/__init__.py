"""Interface strings through gettext catalogs (Babel), with CLDR plurals and number formats.

Catalogs are `.po` files under `locales/<code>/LC_MESSAGES/quizbot.po`, read with Babel at
start-up, so there is no compile step to forget. English is the source language (the msgids);
a string missing from a catalog falls back to English, never to a blank: so does a fuzzy entry
(not yet reviewed), a plural entry with an empty form, and a translation whose placeholders do
not fit the values (a typo in one language must not break the message).

`python scripts/i18n.py` refreshes the catalogs from the code; `--check` reports gaps.
"""

from __future__ import annotations

import io
import logging
from functools import cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import NullTranslations, Translations

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


@cache
def _translations(locale: str) -> NullTranslations:
    path = catalog_path(locale)
    if locale == DEFAULT_LOCALE or not path.exists():
        return NullTranslations()
    with path.open("rb") as fh:
        catalog = read_po(fh, locale=locale)
    # write_mo would fill an empty plural form with the English one, mixing two languages in
    # one entry and applying this locale's plural rule to English text: drop the entry instead
    for message in list(catalog):
        if message.id and message.pluralizable and not all(message.string or ()):
            del catalog[message.id]
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)


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

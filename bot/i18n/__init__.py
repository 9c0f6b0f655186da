"""Interface strings through gettext catalogs (Babel), with CLDR plurals and number formats.

Catalogs are `.po` files under `locales/<code>/LC_MESSAGES/quizbot.po`, read with Babel at
start-up, so there is no compile step to forget. English is the source language (the msgids);
a string missing from a catalog falls back to English, never to a blank.
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import NullTranslations, Translations

from bot.content.schema import DEFAULT_LOCALE, LOCALES

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
        return text.format(**values) if values else text

    def ngettext(self, singular: str, plural: str, n: int, **values: object) -> str:
        text = self._t.ngettext(singular, plural, n)
        return text.format(n=self.number(n), **values)

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

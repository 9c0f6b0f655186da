"""Slash commands in the people's languages: descriptions and choice names from the gettext
catalogs, sent as `*_localizations` when the commands are synced (platform-limits.md B4).

The msgids are the English texts in commands.py and daily.py. discord.py asks for every
`discord.Locale`; we answer for those that map to one of our locales (today Hindi: Discord's
client has no Bengali, so Bengali readers see English command descriptions and choose their
language for everything else with /lang). English is the default text, so no en-* entries.

Names (of commands, groups and options) stay English: Discord restricts them (lowercase, a
narrow alphabet, 32 characters) and interactions carry the default names anyway.

A translation equal to the English text is left out, so a string missing from a catalog
falls back to English on Discord's side; so is one too long for Discord, which would otherwise
fail the whole sync (and the start-up) with a 400.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.app_commands import TranslationContextLocation as Where

from bot.content.items import DEFAULT_LOCALE
from bot.i18n import normalize, translator

log = logging.getLogger(__name__)

NAMES = frozenset({Where.command_name, Where.group_name, Where.parameter_name})
MAX_LENGTH = 100  # descriptions and choice names (discord-api-docs application-commands.mdx)


def our_locale(locale: discord.Locale) -> str | None:
    """The supported locale a Discord locale maps to, English (the default text) excluded."""
    code = normalize(locale.value)
    return None if code in (None, DEFAULT_LOCALE) else code


class CatalogTranslator(app_commands.Translator):
    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        code = our_locale(locale)
        if code is None or context.location in NAMES:
            return None
        text = translator(code).gettext(string.message)
        if text == string.message:
            return None
        if not 1 <= len(text) <= MAX_LENGTH:
            log.warning("%s translation of %r is %d characters, over Discord's %d; English used",
                        code, string.message, len(text), MAX_LENGTH)
            return None
        return text

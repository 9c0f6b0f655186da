"""Which language a person or a whole chat reads: the one place this is decided.

What one person reads alone (a private chat, a DM, an ephemeral reply, an alert) is in their
own language: their /lang, else their client's; the chat's language only when the platform
told us neither. What a shared chat reads is in the chat's language (its /lang, else the
platform's language for the chat). A private chat has one reader, so it follows the person.
"""

from __future__ import annotations

from typing import Protocol

from bot.content.items import DEFAULT_LOCALE
from bot.core.errors import UnsupportedLocale
from bot.core.models import Chat, Person
from bot.core.ports import ChatStore, PeopleStore
from bot.i18n import normalize


class LocalesStorage(PeopleStore, ChatStore, Protocol):
    """What Locales reads and writes."""


RESET_WORDS = frozenset({"auto", "reset", "default"})


def personal_locale(chosen: str | None, client: str | None, chat: str | None) -> str:
    """One reader's language: their /lang, else their client's, else the chat's."""
    return chosen or normalize(client) or chat or DEFAULT_LOCALE


class Locales:
    def __init__(self, storage: LocalesStorage) -> None:
        self.storage = storage

    async def for_person(self, person: Person | None, chat: Chat | None = None) -> str:
        """What one person reads (an ephemeral reply, an alert, a private message)."""
        chosen = await self.storage.person_locale(person.key) if person is not None else None
        client = person.platform_locale if person is not None else None
        chat_choice = None
        if not chosen and not normalize(client) and chat is not None:
            chat_choice = await self.storage.chat_locale(chat.key)
        return personal_locale(chosen, client, chat_choice)

    async def for_chat(self, chat: Chat) -> str:
        """What the whole chat reads (a question, a summary): the chat's /lang, else the
        platform's language for the chat (as given now, else as last seen), else English."""
        if choice := await self.storage.chat_locale(chat.key):
            return choice
        if locale := normalize(chat.platform_locale):
            return locale
        return normalize(await self.storage.chat_platform_locale(chat.key)) or DEFAULT_LOCALE

    async def for_audience(self, chat: Chat, person: Person | None = None) -> str:
        """A reply everyone in `chat` sees; a private chat has one reader, so it is theirs."""
        if chat.is_private and person is not None:
            return await self.for_person(person, chat)
        return await self.for_chat(chat)

    async def set_for_person(self, person: Person, code: str | None) -> str | None:
        """The person's choice; None (or "auto") follows the chat and the platform again."""
        locale = check(code)
        await self.storage.upsert_person(person.key, person.known_name)
        await self.storage.set_person_locale(person.key, locale)
        return locale

    async def set_for_chat(self, chat: Chat, code: str | None) -> str | None:
        locale = check(code)
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        await self.storage.set_chat_locale(chat.key, locale)
        return locale


def check(code: str | None) -> str | None:
    """A supported locale, or None for "follow the default"; UnsupportedLocale otherwise."""
    if code is None or code.strip().lower() in RESET_WORDS:
        return None
    locale = normalize(code)
    if locale is None:
        raise UnsupportedLocale(code)
    return locale

"""Telegram users and chats as core values, and the platform references bound to posts."""

from __future__ import annotations

import telegram

from bot.core.models import Chat, Person

PREFIX = "tg:"


def person_of(user: telegram.User) -> Person:
    return Person(f"{PREFIX}{user.id}", user.full_name, platform_locale=user.language_code)


def chat_of(chat: telegram.Chat) -> Chat:
    title = chat.title or chat.full_name or ""
    return Chat(f"{PREFIX}{chat.id}", title, is_private=chat.type == telegram.Chat.PRIVATE)


def chat_id_of(chat_key: str) -> int:
    """The Telegram chat id inside a chat key such as "tg:-100123"."""
    if not chat_key.startswith(PREFIX):
        raise ValueError(f"not a Telegram chat: {chat_key!r}")
    return int(chat_key.removeprefix(PREFIX))


def poll_ref(poll_id: str) -> str:
    return f"tg-poll:{poll_id}"


def message_ref(chat_id: int, message_id: int) -> str:
    return f"tg-msg:{chat_id}:{message_id}"


def parse_message_ref(ref: str) -> tuple[int, int] | None:
    """(chat_id, message_id) of a "tg-msg:" reference, else None."""
    kind, _, rest = ref.partition(":")
    chat, _, message = rest.rpartition(":")
    if kind != "tg-msg" or not chat or not message:
        return None
    try:
        return int(chat), int(message)
    except ValueError:
        return None


def card_ref(chat_id: int, message_id: int) -> str:
    """A question's card (the photo sent just before it), retired with it."""
    return f"tg-card:{chat_id}:{message_id}"


def parse_card_ref(ref: str) -> tuple[int, int] | None:
    """(chat_id, message_id) of a "tg-card:" reference, else None."""
    kind, _, rest = ref.partition(":")
    if kind != "tg-card":
        return None
    return parse_message_ref(f"tg-msg:{rest}")


def prompt_ref(chat_id: int, message_id: int) -> str:
    """A question's "Answer ✍" prompt (kinds.py): a reply to it answers that question. Not
    a message its close retires (no tg-msg: prefix)."""
    return f"tg-prompt:{chat_id}:{message_id}"

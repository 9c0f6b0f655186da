"""A person's own data: /mydata sends it as a JSON file; /mydata delete, confirmed with a
button, deletes it everywhere (bot/storage/privacy.py says what that removes and why answers
are removed rather than anonymised). Operators do the same with `quizbot privacy`.

- Only where the reply is seen by the person alone: a private chat, or a platform's private
  reply (Discord's ephemeral messages). In a group it is refused and nothing is sent.
- The confirmation button carries all it needs, so it works in any process and after a
  restart: when it expires and a signature of (person, expiry) keyed with a secret every
  process shares (the platform's bot token). A press by anyone else than the person it was
  made for, a changed or made-up one, or one after CONFIRM_FOR is refused and deletes
  nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.core.clock import Clock
from bot.core.errors import UserError
from bot.core.models import Chat, Person
from bot.core.ports import PrivacyStore
from bot.i18n import Translator, _

CONFIRM_FOR = timedelta(minutes=15)  # a confirmation button is good this long
FILE_NAME = "quizbot-mydata.json"
DELETE_WORDS = frozenset({"delete", "erase", "remove"})
SIGNATURE_CHARS = 20  # hex digits of HMAC-SHA256 kept: 80 bits, short enough for 64-byte data


class PrivacyError(UserError):
    """/mydata refused: nothing sent, nothing deleted."""


def only_in_private() -> PrivacyError:
    return PrivacyError(_("/mydata works only in a private chat with me: send it to me there."))


def bad_confirmation() -> PrivacyError:
    return PrivacyError(_(
        "This button is not valid (it has expired or is not yours). Nothing was deleted; "
        "send /mydata delete to get a new one."))


def unknown_words(words: str) -> PrivacyError:
    return PrivacyError(_(
        "“{words}” is not something /mydata does: /mydata sends you what I store about you, "
        "/mydata delete deletes it."), words=words)


@dataclass(frozen=True, slots=True)
class MyData:
    """The person's data as a file to send."""

    file_name: str
    content: bytes


class Privacy:
    def __init__(self, storage: PrivacyStore, clock: Clock) -> None:
        self.storage = storage
        self.clock = clock

    @staticmethod
    def check_private(chat: Chat | None, replies_privately: bool = False) -> None:
        """Refuse /mydata where others would see the reply (`replies_privately`: the platform
        shows this reply to the person alone wherever they are)."""
        if not replies_privately and chat is not None and not chat.is_private:
            raise only_in_private()

    @staticmethod
    def wants_delete(words: str) -> bool:
        """/mydata's words: nothing (send the data) or delete; anything else is refused."""
        word = words.strip().lower()
        if not word:
            return False
        if word in DELETE_WORDS:
            return True
        raise unknown_words(words.strip())

    async def export(self, person_key: str) -> MyData:
        data = await self.storage.person_data(person_key)
        exported = {"exported_at": self.clock.now().astimezone(UTC).isoformat(), **data}
        # a long history is megabytes of JSON: encoded off the event loop
        content = await asyncio.to_thread(_encode, exported)
        return MyData(FILE_NAME, content)

    def confirmation(self, person: Person, secret: str) -> str:
        """What the confirmation button carries: its expiry and signature ("<unix>.<hex>")."""
        until = int((self.clock.now() + CONFIRM_FOR).timestamp())
        return f"{until}.{_sign(person.key, until, secret)}"

    async def delete_confirmed(
        self, person: Person, token: str, secret: str, private_chats: Sequence[str] = ()
    ) -> bool:
        """Delete the person's data (and their `private_chats` with the bot) if `token` is a
        confirmation made for them that has not expired; PrivacyError otherwise. False if
        nothing was stored."""
        until_text, _dot, signature = token.partition(".")
        if not until_text.isdigit() or not hmac.compare_digest(
            signature, _sign(person.key, int(until_text), secret)
        ):
            raise bad_confirmation()
        if datetime.fromtimestamp(int(until_text), UTC) < self.clock.now():
            raise bad_confirmation()
        return await self.storage.delete_person(person.key, private_chats)

    async def delete(self, person_key: str) -> bool:
        """An operator's deletion (quizbot privacy delete): no confirmation."""
        return await self.storage.delete_person(person_key)


def _encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=2).encode()


def _sign(person_key: str, until: int, secret: str) -> str:
    message = f"quizbot mydata delete {person_key} {until}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:SIGNATURE_CHARS]


# what the person reads --------------------------------------------------------------------
def export_caption(t: Translator) -> str:
    return t.gettext(
        "Everything I store about you, as a JSON file. /mydata delete deletes it.")


def confirm_text(t: Translator) -> str:
    return t.gettext(
        "Delete everything I store about you? Your answers (you leave every leaderboard), "
        "your language, your review reminder, your problem reports and your draft are "
        "deleted for good; packs you published stay without your name.")


def confirm_button(t: Translator) -> str:
    return t.gettext("Delete my data")


def deleted_text(deleted: bool, t: Translator) -> str:
    if deleted:
        return t.gettext("Done: everything I stored about you is deleted.")
    return t.gettext("I store nothing about you: there was nothing to delete.")

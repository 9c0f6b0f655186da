"""Who may open a chat's web dashboard, and the signed links and sessions that let them.

`/dashboard` (a chat's admins: the platform's word, `allowed=`) gets a link that opens that
chat's dashboard, and only that chat's, for LINK_LIFETIME; `/dashboard revoke` ends every link
and session of the chat at once, in every process, by bumping the chat's generation in the
database (DashboardStore), which every request compares.

Tokens are signed with HMAC-SHA256 from the standard library, as /mydata's confirmation is
(privacy.py): a token carries four small fields (purpose, chat, generation, expiry) and the
reader's language, so itsdangerous would add a dependency for what `hmac.compare_digest` and
base64 give. The purpose is signed too: a session cookie is no link and neither is a CSRF
token, so one can never stand for another.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal
from urllib.parse import quote

from bot.core.clock import Clock
from bot.core.errors import DashboardOff, may_not_open_dashboard
from bot.core.models import Chat
from bot.core.ports import DashboardStore
from bot.i18n import Translator

LINK_LIFETIME = timedelta(hours=24)
MIN_SECRET = 32  # characters of QUIZBOT_WEB_SECRET
Purpose = Literal["link", "session", "person"]  # person: a learner's own pages
Denial = Literal["tampered", "expired", "revoked", "other-chat"]


class Denied(Exception):
    """A link or session that opens nothing: `reason` for the log, `locale` (when the token
    could be read at all) for the page that says to ask the bot again."""

    def __init__(self, reason: Denial, locale: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.locale = locale


@dataclass(frozen=True, slots=True)
class Grant:
    """What a valid link or session gives: one chat's dashboard until `expires`."""

    chat_key: str
    generation: int
    expires: datetime
    locale: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class DashboardAccess:
    def __init__(self, storage: DashboardStore, clock: Clock, secret: str | None = None,
                 base_url: str | None = None) -> None:
        """`secret`: QUIZBOT_WEB_SECRET; `base_url`: QUIZBOT_WEB_URL. Either None: off."""
        self.storage = storage
        self.clock = clock
        self._key = None if secret is None else hashlib.sha256(secret.encode()).digest()
        self.base_url = None if base_url is None else base_url.rstrip("/")

    @property
    def enabled(self) -> bool:
        return self._key is not None and self.base_url is not None

    def _mac(self, purpose: str, body: str) -> str:
        assert self._key is not None
        return _b64(hmac.new(self._key, f"{purpose}.{body}".encode(), hashlib.sha256)
                    .digest())

    # links and sessions ------------------------------------------------------------------
    def sign(self, purpose: Purpose, grant: Grant) -> str:
        body = _b64(json.dumps(
            [grant.chat_key, grant.generation, int(grant.expires.timestamp()), grant.locale],
            separators=(",", ":")).encode())
        return f"{body}.{self._mac(purpose, body)}"

    async def grant_of(self, purpose: Purpose, token: str, chat_key: str | None = None) -> Grant:
        """The grant a token carries if it is ours, unexpired, of the chat's current
        generation (and of `chat_key`, when given); Denied otherwise."""
        if self._key is None:
            raise Denied("tampered")
        body, _dot, mac = token.partition(".")
        if not hmac.compare_digest(mac.encode(), self._mac(purpose, body).encode()):
            raise Denied("tampered")
        try:
            chat, generation, until, locale = json.loads(_unb64(body))
            grant = Grant(str(chat), int(generation),
                          datetime.fromtimestamp(int(until), UTC),
                          str(locale))
        except (ValueError, TypeError, binascii.Error):
            raise Denied("tampered") from None
        if chat_key is not None and grant.chat_key != chat_key:
            raise Denied("other-chat", grant.locale)
        if grant.expires <= self.clock.now():
            raise Denied("expired", grant.locale)
        if await self.storage.dashboard_generation(grant.chat_key) != grant.generation:
            raise Denied("revoked", grant.locale)
        return grant

    def csrf(self, session: str) -> str:
        """The token every form of a session posts back (a cross-site page cannot read it)."""
        return self._mac("csrf", session)

    def csrf_ok(self, session: str, token: str) -> bool:
        return bool(token) and hmac.compare_digest(token.encode(), self.csrf(session).encode())

    # the commands ------------------------------------------------------------------------
    async def link(self, chat: Chat, *, allowed: bool, locale: str) -> str:
        """/dashboard: a link to the chat's dashboard for LINK_LIFETIME, for its admins."""
        if not allowed:
            raise may_not_open_dashboard()
        if not self.enabled or self.base_url is None:
            raise DashboardOff()
        generation = await self.storage.dashboard_generation(chat.key)
        token = self.sign("link", Grant(chat.key, generation,
                                        self.clock.now() + LINK_LIFETIME, locale))
        return f"{self.base_url}/open/{quote(token, safe='')}"

    def app_url(self) -> str | None:
        """The Telegram Mini App's address (Telegram opens https pages only); None: off."""
        if not self.enabled or self.base_url is None or not self.base_url.startswith("https://"):
            return None
        return f"{self.base_url}/app"

    async def person_session(self, person_key: str, locale: str) -> str:
        """A session for a learner's own pages (the Mini App), for LINK_LIFETIME."""
        generation = await self.storage.dashboard_generation(person_key)
        return self.sign("person", Grant(person_key, generation,
                                         self.clock.now() + LINK_LIFETIME, locale))

    async def revoke(self, chat: Chat, *, allowed: bool) -> None:
        """/dashboard revoke: every link and session of the chat stops working now."""
        if not allowed:
            raise may_not_open_dashboard()
        await self.storage.revoke_dashboard(chat.key)


# what the admin reads -------------------------------------------------------------------------
def link_text(link: str, t: Translator) -> str:
    return t.gettext("This chat's dashboard, for 24 hours (keep the link to yourself: anyone "
                     "with it can read the chat's results):\n{link}\n/dashboard revoke ends "
                     "every link and session of this chat.", link=link)


def open_button_text(t: Translator) -> str:
    return t.gettext("Open the dashboard")


def progress_button_text(t: Translator) -> str:
    return t.gettext("Open my progress")


def progress_here_text(t: Translator) -> str:
    return t.gettext("Your answers, accuracy per topic and due reviews:")


def revoked_text(t: Translator) -> str:
    return t.gettext("Every dashboard link and session of this chat has ended.")


def sent_privately_text(t: Translator) -> str:
    return t.gettext("I sent it to you in our private chat.")


def start_private_first_text(t: Translator) -> str:
    return t.gettext("Start a private chat with me first (open my profile and press Start), "
                     "then send /dashboard here again.")

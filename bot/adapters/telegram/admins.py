"""Who may change a chat's settings (/daily, /lang chat): asked of the Bot API, briefly cached.

Telegram does not say in a message whether its sender is an admin, and a command menu scope
only hides commands, so every change is checked with getChatMember (A5 in
shared/platform-limits.md). The answer is cached per (chat, user) for a short time so a burst of
commands does not become a burst of API calls; a demoted admin keeps the right for at most
that long.
"""

from __future__ import annotations

import logging
import time

import telegram
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

log = logging.getLogger(__name__)

ADMIN_STATUSES = (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)
DEFAULT_TTL = 60.0  # seconds


class AdminCheck:
    def __init__(self, ttl: float = DEFAULT_TTL, size: int = 4096) -> None:
        self.ttl = ttl
        self._size = size
        self._cache: dict[tuple[int, int], tuple[float, bool]] = {}

    async def may_manage(self, message: telegram.Message) -> bool:
        """Whether the sender of `message` may change its chat's settings.

        A private chat belongs to the person in it; only a channel's admins can post in it; in
        a group, a message an anonymous admin sends comes from the group itself (sender_chat);
        anyone else is looked up with getChatMember.
        """
        chat = message.chat
        if chat.type in (ChatType.PRIVATE, ChatType.CHANNEL):
            return True
        if message.sender_chat is not None:
            # Anonymous admins post as the group. Anyone posting as some other chat (their
            # channel, the linked channel) cannot be identified, so is not an admin.
            return message.sender_chat.id == chat.id
        user = message.from_user
        if user is None:
            return False
        key = (chat.id, user.id)
        now = time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            member = await message.get_bot().get_chat_member(chat.id, user.id)
        except TelegramError as exc:
            # e.g. the bot is not in the chat any more; refuse, and ask again next time
            log.warning("could not check whether tg:%s is an admin of tg:%s: %s",
                        user.id, chat.id, exc)
            return False
        allowed = member.status in ADMIN_STATUSES
        if len(self._cache) >= self._size:
            self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            if len(self._cache) >= self._size:
                self._cache.clear()
        self._cache[key] = (now + self.ttl, allowed)
        return allowed

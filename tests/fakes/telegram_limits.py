"""Telegram's published flood limits, enforced by the fake Bot API (telegram_api.py's
`limits`, off unless a test sets it): about 30 messages a second per bot token, 20 a minute
per group, about 1 a second per chat (core.telegram.org/bots/faq; ../../../shared/
platform-limits.md). A message past one of them is refused with 429 and `retry_after` (whole
seconds, as Telegram gives) and counted in `refused`; it takes nothing from the budget.

A message is a call that posts one (SENDS). A chat may get `chat_burst` at once, then one
each `chat_interval`; a group at most `per_group` in any minute. Each limit tolerates `slack`
seconds of arrival jitter (two requests paced 1 s apart can arrive 0.98 s apart), and the
per-token one a burst of `token_burst`, as Telegram's limits are approximate; a sender above
the rates still meets 429s within a second.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SENDS = frozenset({
    "sendMessage", "sendPoll", "sendPhoto", "sendDocument", "sendMediaGroup", "sendAnimation",
    "sendVideo", "sendAudio", "sendVoice", "sendSticker", "copyMessage", "forwardMessage",
})


@dataclass
class FloodLimits:
    per_token: float = 30.0  # messages a second, per bot token
    token_burst: int = 30
    per_group: int = 20  # messages a minute in one group or channel
    chat_interval: float = 1.0  # seconds between two messages in one chat, over time
    chat_burst: int = 3  # messages a chat may get at once
    slack: float = 0.25
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    refused: int = 0  # 429s answered
    accepted: list[tuple[float, int]] = field(default_factory=list, repr=False)  # when, chat
    _token_tat: float = 0.0  # GCRA's theoretical arrival time of the token's next message
    _chat_next: dict[int, float] = field(default_factory=dict, repr=False)
    _group_log: dict[int, deque[float]] = field(default_factory=lambda: defaultdict(deque),
                                                repr=False)

    def check(self, method: str, params: dict[str, Any]) -> int | None:
        """None if the call may go (and it is counted), else the seconds to wait."""
        if method not in SENDS or "chat_id" not in params:
            return None
        try:
            chat_id = int(params["chat_id"])
        except (TypeError, ValueError):
            return None
        now = self.clock()
        interval = 1.0 / self.per_token
        waits = [self._token_tat - (self.token_burst - 1) * interval - self.slack - now,
                 self._chat_next.get(chat_id, now) - (self.chat_burst - 1) * self.chat_interval
                 - self.slack - now]
        log = self._group_log[chat_id] if chat_id < 0 else None
        if log is not None:
            while log and now - log[0] >= 60.0:
                log.popleft()
            if len(log) >= self.per_group:
                waits.append(log[0] + 60.0 - self.slack - now)
        wait = max(waits)
        if wait > 0:
            self.refused += 1
            return max(1, math.ceil(wait))
        self._token_tat = max(self._token_tat, now) + interval
        self._chat_next[chat_id] = max(self._chat_next.get(chat_id, now), now) \
            + self.chat_interval
        if log is not None:
            log.append(now)
        self.accepted.append((now, chat_id))
        return None

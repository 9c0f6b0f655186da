"""Questions sent without a reply: they may be in the chat, so whatever appears is bound.

A sendPoll that timed out after it was sent may still have been accepted by Telegram (a slow
accept answered after 7 s was seen). Sending it again would show two polls, one of them
counted nowhere. Instead the send is remembered here, and:
- a poll whose state Telegram reports (a `poll` update: Telegram sends one for each vote on
  the bot's own polls) with the question and options of a remembered poll is bound to its
  post; the votes that arrived before that (a `poll_answer` carries only the poll id) are
  kept here meanwhile and recorded once it is bound;
- a press on a message of the bot's whose text is a remembered button question, naming that
  question's post in its data, binds the message.
Without its message id such a poll cannot be stopped by the bot; it closes by its own
open_period, and its summary is posted in the chat without quoting it.

Everything here is in memory and bounded; a remembered send is forgotten once its question
would have closed (or after a day).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

import httpx
import telegram
from telegram.error import BadRequest, NetworkError

log = logging.getLogger(__name__)

SENDS_KEPT = 256  # unconfirmed sends remembered at once (oldest forgotten first)
VOTES_KEPT = 4096  # votes on not-yet-known polls kept at once (oldest dropped first)
BOUND_KEPT = 1024  # polls bound late, remembered so racing votes find them
FOREVER = 24 * 3600.0  # seconds a send with no closing time is remembered
GRACE = 60.0  # seconds past its closing time a send is still looked for


def may_have_arrived(exc: NetworkError) -> bool:
    """Whether a failed call may still have taken effect at Telegram: it was sent and then
    timed out, or the connection broke before the reply. A refused connection, a connect
    timeout or a full connection pool never left here; an error reply (a 5xx, a BadRequest)
    is Telegram saying it did not do it."""
    cause = exc.__cause__
    if isinstance(exc, BadRequest) or not isinstance(cause, httpx.HTTPError):
        return False
    return not isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))


def _same(a: str, b: str) -> bool:
    return a.strip() == b.strip()


@dataclass(frozen=True, slots=True)
class Unconfirmed:
    post_id: int
    chat_id: int
    text: str  # the poll's question, or the button message's text, as sent
    options: tuple[str, ...]  # a poll's options as sent; () for a button message
    until: float  # time.monotonic() after which it is forgotten

    @property
    def is_poll(self) -> bool:
        return bool(self.options)


class UnconfirmedSends:
    def __init__(self) -> None:
        self._sends: OrderedDict[int, Unconfirmed] = OrderedDict()  # post id -> send
        self._votes: OrderedDict[tuple[str, int], telegram.PollAnswer] = OrderedDict()
        self._bound: OrderedDict[str, int] = OrderedDict()  # poll id -> post id

    def add(self, sent: Unconfirmed) -> None:
        self._sends[sent.post_id] = sent
        self._sends.move_to_end(sent.post_id)
        while len(self._sends) > SENDS_KEPT:
            self._sends.popitem(last=False)

    @staticmethod
    def until(seconds_open: float | None) -> float:
        return time.monotonic() + (FOREVER if seconds_open is None else seconds_open + GRACE)

    def _live(self) -> list[Unconfirmed]:
        now = time.monotonic()
        for post_id in [p for p, s in self._sends.items() if s.until <= now]:
            del self._sends[post_id]
        if not any(s.is_poll for s in self._sends.values()) and self._votes:
            log.info("dropped %d vote(s) on polls that never turned out to be ours",
                     len(self._votes))
            self._votes.clear()
        return list(self._sends.values())

    @property
    def awaiting_polls(self) -> bool:
        """Some poll may be in a chat without being bound (cheap: no expiry check)."""
        return any(s.is_poll for s in self._sends.values())

    # polls -----------------------------------------------------------------------------
    def take_poll(self, poll: telegram.Poll) -> Unconfirmed | None:
        """The remembered poll this one is (same question and options), now no longer
        remembered; None if there is none."""
        options = [o.text for o in poll.options]
        for sent in self._live():
            if sent.is_poll and _same(sent.text, poll.question) and len(options) == len(
                sent.options
            ) and all(_same(a, b) for a, b in zip(options, sent.options, strict=True)):
                del self._sends[sent.post_id]
                return sent
        return None

    def bound(self, poll_id: str, post_id: int) -> list[telegram.PollAnswer]:
        """The poll was bound to its post: the votes kept for it, to be recorded now.
        Synchronous, so a vote handled at the same time is either kept before this or sees
        the binding (late_post) after it."""
        self._bound[poll_id] = post_id
        while len(self._bound) > BOUND_KEPT:
            self._bound.popitem(last=False)
        votes = [v for (p, _), v in self._votes.items() if p == poll_id]
        for key in [k for k in self._votes if k[0] == poll_id]:
            del self._votes[key]
        return votes

    def late_post(self, poll_id: str) -> int | None:
        return self._bound.get(poll_id)

    def keep_vote(self, answer: telegram.PollAnswer) -> bool:
        """Keep a vote on an unknown poll while some sent poll may turn out to be it.
        False if none may (the vote is not for one of our questions)."""
        if not any(s.is_poll for s in self._live()) or answer.user is None:
            return False
        self._votes[(answer.poll_id, answer.user.id)] = answer
        while len(self._votes) > VOTES_KEPT:
            self._votes.popitem(last=False)
        return True

    # button messages -------------------------------------------------------------------
    def take_message(self, chat_id: int, post_id: int, text: str | None) -> Unconfirmed | None:
        """The remembered button question of `post_id` in this chat, if `text` is its text."""
        sent = self._sends.get(post_id)
        if sent is None or sent.is_poll or sent.chat_id != chat_id or text is None \
                or not _same(sent.text, text) or sent.until <= time.monotonic():
            return None
        del self._sends[post_id]
        return sent

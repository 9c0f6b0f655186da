"""What the core needs from a platform and from the drawing and metrics code: ChatPort, which
each adapter implements so the core's scheduler can post and close questions by itself, the
failures it may raise (ChatGone, TryLater), the round summary it shows, the card and chart
renderers (bot/reports) and the Meter (bot/metrics.py). None of them imports a platform
library into the core."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from bot.core.models import PostSummary, QuizReport, ShownQuestion


class ChatGone(Exception):
    """The bot can never post in that chat again (removed, blocked, the chat deleted)."""


class TryLater(Exception):
    """A transient failure (network, flood limit): the same call may work later."""

    def __init__(self, reason: str = "", retry_after: timedelta | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class RoundScore:
    person_key: str
    name: str
    right: int  # questions of the round answered right
    answered: int


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """A round's end: who got how many right (most first), in the round's language."""

    round_id: int
    chat_key: str
    locale: str
    asked: int  # questions asked (fewer than `total` when a new /quiz replaced the round)
    total: int
    scores: tuple[RoundScore, ...]


class ChatPort(Protocol):
    """What an adapter offers the core for chats of its platform (keys starting with `prefix`).

    Both methods raise ChatGone or TryLater for the failures the core handles itself; anything
    else is logged by the core and tried again later, like TryLater.
    """

    prefix: str  # e.g. "tg:" or "dc:"

    async def send_question(self, question: ShownQuestion) -> None:
        """Send a question the core created to question.chat_key and bind the platform's
        references (poll id, message id) to question.post_id before returning."""
        ...

    async def close_question(self, summary: PostSummary) -> None:
        """Retire the question on the platform (stop the poll, disable the buttons) and show
        its one summary there."""
        ...

    async def round_over(self, summary: RoundSummary) -> None:
        """Show a round's short summary in its chat (after its last question's summary)."""
        ...

    async def send_private(self, person_key: str, text: str) -> None:
        """Send `text` to the person privately (Telegram: their private chat with the bot;
        Discord: a DM). `person_key` starts with `prefix`."""
        ...


class CardRenderer(Protocol):
    """Draws a question's card as PNG bytes (bot/reports/cards.py): its prompt, code, formula
    and image in its language. Blocking and CPU-bound: the core calls it in a worker
    thread."""

    def question_card(self, question: ShownQuestion) -> bytes: ...

    def card_key(self, question: ShownQuestion) -> str:
        """A hash of what the card shows and how it is drawn (the same card, the same key)."""
        ...


class ChartRenderer(Protocol):
    """Draws charts as PNG bytes, every word in the reader's language and script
    (bot/reports/png.py, with Pillow, which the core never imports). Blocking and CPU-bound:
    the core calls it in a worker thread."""

    def report_chart(self, reports: Sequence[QuizReport], locale: str) -> bytes:
        """The share of answers on each option, per question, lettered as in the reports."""
        ...

    def summary_chart(self, summary: PostSummary) -> bytes:
        """One closed question's share of answers on each option, in the order and the
        language its chat saw."""
        ...


class Meter(Protocol):
    """Where the core reports what it did, for the operator's metrics (bot/metrics.py counts
    it for Prometheus); the core never reads anything back. Labels stay few: a platform and an
    outcome, never a person or a chat."""

    def answered(self, platform: str, outcome: str, seconds: float) -> None:
        """One answer handled: `outcome` is accepted, repeat, closed or refused; `seconds`
        from the call to its commit (or refusal)."""
        ...

    def ticked(self, seconds: float, overdue: bool) -> None:
        """One scheduler round took `seconds`; `overdue`: longer than its interval, so the
        work due in the next one starts late."""
        ...


class NoMeter:
    """Counts nothing: the default when no metrics endpoint is configured."""

    def answered(self, platform: str, outcome: str, seconds: float) -> None:
        pass

    def ticked(self, seconds: float, overdue: bool) -> None:
        pass

"""A ChatPort for core unit tests: no platform, just a record of what the core sent.

It keeps the contract real adapters keep (bind a reference for every question sent; raise
ChatGone or TryLater instead of platform errors) and fails on demand:

    port = FakePort(clock=clock).attach(service)
    port.gone.add("tg:-1")                        # that chat raises ChatGone from now on
    port.fail_closes(TryLater("flood", timedelta(minutes=5)))  # the next close_question
    port.fail_sends(ConnectionError("down"), ConnectionError("down"))  # the next two sends
    port.fail_rounds(TryLater("flood")); port.fail_privates(ConnectionError("down"))
    port.hold()                                   # close_question waits for port.release()
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING

from bot.core.models import PostSummary, ShownQuestion
from bot.core.ports import ChatGone, RoundSummary

if TYPE_CHECKING:
    from bot.core.service import QuizService
    from tests.clock import FakeClock


class FakePort:
    def __init__(self, prefix: str = "tg:", clock: FakeClock | None = None) -> None:
        self.prefix = prefix
        self.clock = clock
        self.service: QuizService | None = None
        self.sent: list[ShownQuestion] = []
        self.sent_at: list[datetime] = []  # when each question in `sent` went out
        self.closed: list[PostSummary] = []  # summaries shown, in order
        self.rounds: list[RoundSummary] = []  # round summaries shown, in order
        self.events: list[tuple[str, int]] = []  # ("sent" | "closed", post id), in order
        self.send_attempts = 0
        self.close_attempts = 0
        self.gone: set[str] = set()  # chat keys the bot can no longer post in
        self._send_failures: list[BaseException] = []
        self._close_failures: list[BaseException] = []
        self._round_failures: list[BaseException] = []
        self._private_failures: list[BaseException] = []
        self._gate: asyncio.Event | None = None
        self.closing = asyncio.Event()  # set once close_question is first called
        self.private: list[tuple[str, str]] = []  # (person key, text) sent privately

    # wiring --------------------------------------------------------------------------------
    def attach(self, service: QuizService) -> FakePort:
        """Connect to `service` (as an adapter does at the end of start())."""
        self.service = service
        service.delivery.connect(self)
        return self

    # failures on demand --------------------------------------------------------------------
    def fail_sends(self, *errors: BaseException) -> None:
        """The next len(errors) send_question calls raise these, in order."""
        self._send_failures.extend(errors)

    def fail_closes(self, *errors: BaseException) -> None:
        """The next len(errors) close_question calls raise these, in order."""
        self._close_failures.extend(errors)

    def fail_rounds(self, *errors: BaseException) -> None:
        """The next len(errors) round_over calls raise these, in order."""
        self._round_failures.extend(errors)

    def fail_privates(self, *errors: BaseException) -> None:
        """The next len(errors) send_private calls raise these, in order."""
        self._private_failures.extend(errors)

    def hold(self) -> None:
        """close_question waits (after counting the attempt) until release()."""
        self._gate = asyncio.Event()

    def release(self) -> None:
        if self._gate is not None:
            self._gate.set()

    @property
    def failures_left(self) -> int:
        return sum(map(len, (self._send_failures, self._close_failures, self._round_failures,
                             self._private_failures)))

    # what the core sees --------------------------------------------------------------------
    def summaries_for(self, chat_key: str) -> list[PostSummary]:
        return [s for s in self.closed if s.chat_key == chat_key]

    def questions_for(self, chat_key: str) -> list[ShownQuestion]:
        return [q for q in self.sent if q.chat_key == chat_key]

    # ChatPort --------------------------------------------------------------------------------
    async def send_question(self, question: ShownQuestion) -> None:
        assert question.chat_key.startswith(self.prefix), question.chat_key
        self.send_attempts += 1
        if question.chat_key in self.gone:
            raise ChatGone(f"{question.chat_key}: bot removed")
        if self._send_failures:
            raise self._send_failures.pop(0)
        self.sent.append(question)
        self.events.append(("sent", question.post_id))
        if self.clock is not None:
            self.sent_at.append(self.clock.now())
        if self.service is not None:
            await self.service.questions.bind(question.post_id,
                                              f"{self.prefix}msg:{len(self.sent)}")

    async def close_question(self, summary: PostSummary) -> None:
        assert summary.chat_key.startswith(self.prefix), summary.chat_key
        self.close_attempts += 1
        self.closing.set()
        if self._gate is not None:
            await self._gate.wait()
        if summary.chat_key in self.gone:
            raise ChatGone(f"{summary.chat_key}: bot removed")
        if self._close_failures:
            raise self._close_failures.pop(0)
        self.closed.append(summary)
        self.events.append(("closed", summary.post_id))

    async def round_over(self, summary: RoundSummary) -> None:
        assert summary.chat_key.startswith(self.prefix), summary.chat_key
        if summary.chat_key in self.gone:
            raise ChatGone(f"{summary.chat_key}: bot removed")
        if self._round_failures:
            raise self._round_failures.pop(0)
        self.rounds.append(summary)
        self.events.append(("round", summary.round_id))

    async def send_private(self, person_key: str, text: str) -> None:
        assert person_key.startswith(self.prefix), person_key
        if person_key in self.gone:
            raise ChatGone(f"{person_key}: blocked the bot")
        if self._private_failures:
            raise self._private_failures.pop(0)
        self.private.append((person_key, text))

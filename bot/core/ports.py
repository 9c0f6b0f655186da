"""What the core needs from an adapter to post on its own (the daily scheduler)."""

from __future__ import annotations

from typing import Protocol

from bot.core.models import PostSummary, ShownQuestion


class Publisher(Protocol):
    prefix: str  # chat keys this adapter owns, e.g. "tg:" or "dc:"

    async def start(self) -> None: ...
    async def stop(self) -> None: ...

    async def post_question(self, question: ShownQuestion) -> None:
        """Send a question already created by QuizService to question.chat_key, and bind
        the platform references (poll id, message id) to question.post_id."""
        ...

    async def post_summary(self, summary: PostSummary) -> None:
        """Post (or edit in) the one summary of a closed question."""
        ...

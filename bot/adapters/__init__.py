"""Adapters translate platform events into QuizService calls and render the results.

A chat adapter has start()/stop() for `quizbot run` and implements the core's ChatPort
(bot/core/ports.py), connecting itself to the service when it starts so the core's scheduler
can post and close questions in its chats.
"""

from __future__ import annotations

from typing import Protocol

from bot.core.ports import ChatPort


class Adapter(ChatPort, Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...


__all__ = ["Adapter"]

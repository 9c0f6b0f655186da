"""Adapters translate platform events into QuizService calls and render the results.

A chat adapter implements the core's ChatPort (bot/core/ports/platform.py), connecting itself to the
service when it starts so the core's scheduler can post and close questions in its chats, and
the lifecycle below, which `quizbot run` (bot/app.py) drives like a daemon's.
"""

from __future__ import annotations

from typing import Protocol

from bot.core.ports import ChatPort


class CredentialsRejected(Exception):
    """The platform refused the token, at start or later (revoked). The message names the
    setting to fix and never contains the token."""


class ConnectionLost(Exception):
    """The platform connection ended for good, after the library's own retries gave up."""


class Adapter(ChatPort, Protocol):
    name: str  # "Telegram", "Discord": for the log and the one-line errors

    async def start(self) -> None:
        """Connect and start taking events; CredentialsRejected or ConnectionLost if that
        is impossible (nothing is left running then)."""
        ...

    async def stop(self) -> None:
        """Stop taking events, finish the handlers in flight (their commits and replies),
        disconnect. Never confirms to the platform what was not handled."""
        ...

    async def wait_failed(self) -> BaseException:
        """Wait until the connection has ended for good and return why (CredentialsRejected
        for a revoked token, ConnectionLost otherwise). A transient outage never ends it."""
        ...


__all__ = ["Adapter", "ConnectionLost", "CredentialsRejected"]

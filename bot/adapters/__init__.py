"""Adapters translate platform events into QuizService calls and render the results.

Each adapter implements bot.core.ports.Publisher: start()/stop() for `quizbot run`, and the
methods the daily scheduler uses to post into one of its chats.
"""

from bot.core.ports import Publisher

__all__ = ["Publisher"]

"""Fail end-to-end tests on ERROR records: the libraries only log exceptions raised in
handlers, so a broken handler would otherwise look like a timeout."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


class ErrorLog(logging.Handler):
    """Collects ERROR records; a test that provokes one on purpose says so with allow()."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []
        self.allowed: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def allow(self, fragment: str) -> None:
        self.allowed.append(fragment)

    def unexpected(self) -> list[str]:
        messages = [f"{r.name}: {r.getMessage()}" for r in self.records]
        return [m for m in messages if not any(a in m for a in self.allowed)]


@contextmanager
def failing_on_errors(*logger_names: str) -> Iterator[ErrorLog]:
    handler = ErrorLog()
    loggers = [logging.getLogger(name) for name in logger_names]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    if unexpected := handler.unexpected():
        pytest.fail("ERROR logged:\n" + "\n".join(unexpected))

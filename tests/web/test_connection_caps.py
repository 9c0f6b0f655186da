"""The dashboard and the metrics endpoint under idle and half-open connections, with real
sockets on 127.0.0.1: hundreds of them, over the cap, leave both answering a real request within
a bound, no thread per connection, a connection that never finishes its request closed, and
refused requests logged as counts rather than a line each."""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator

import pytest

from bot import metrics
from bot.content import Catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.metrics_endpoint import MetricsEndpoint
from bot.web import server as web_server
from tests.clock import FakeClock
from tests.web.conftest import CHAT_A, SECRET

IDLE = 300  # connections opened and left idle, three times the cap
CAP = 100


async def idle_connections(port: int, n: int, first: bytes = b""
                           ) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    out = []
    for _ in range(n):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        if first:
            writer.write(first)
        out.append((reader, writer))
    return out


def close_all(connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]) -> None:
    for _, writer in connections:
        writer.close()


async def get(port: int, path: str) -> tuple[int, bytes]:
    """One real request on a fresh connection: (status, first bytes of the answer)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                     .encode())
        answer = await reader.read()
    finally:
        writer.close()
    return int(answer.split(b" ", 2)[1]), answer


@pytest.fixture
async def dashboard(sample_catalog: Catalog, storage: Storage, clock: FakeClock
                    ) -> AsyncIterator[int]:
    service = QuizService(sample_catalog, storage, clock, random.Random(3),
                          web=(SECRET, "http://127.0.0.1:9"))
    running = await web_server.serve(service, "127.0.0.1", 0, secure=False,
                                     max_connections=CAP)
    try:
        yield running.port
    finally:
        await running.cleanup()


async def test_idle_connections_over_the_cap_leave_the_dashboard_answering(
        dashboard: int) -> None:
    threads = threading.active_count()
    crowd = await idle_connections(dashboard, IDLE)
    try:
        started = time.monotonic()
        status, _ = await asyncio.wait_for(get(dashboard, f"/chat/{CHAT_A}/"), 5)
        assert status == 403  # answered (no session), not lost or refused
        assert time.monotonic() - started < 5
        # the crowd's oldest were closed to make room: the server holds at most the cap
        closed = 0
        for reader, _ in crowd[:IDLE - CAP]:
            assert await asyncio.wait_for(reader.read(), 5) == b""
            closed += 1
        assert closed == IDLE - CAP
        assert threading.active_count() <= threads + 1  # no thread per connection
    finally:
        close_all(crowd)


async def test_a_request_never_finished_is_closed(
        sample_catalog: Catalog, storage: Storage, clock: FakeClock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(web_server.RUNNER_OPTIONS, "keepalive_timeout", 0.5)
    service = QuizService(sample_catalog, storage, clock, random.Random(3),
                          web=(SECRET, "http://127.0.0.1:9"))
    running = await web_server.serve(service, "127.0.0.1", 0, secure=False)
    try:
        slow = await idle_connections(running.port, 3, b"GET / HTTP/1.1\r\nHost: x\r\n")
        for reader, _ in slow:
            assert await asyncio.wait_for(reader.read(), 5) == b""
        close_all(slow)
    finally:
        await running.cleanup()


async def test_refused_requests_are_logged_as_counts(
        dashboard: int, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "bot.web"):
        for _ in range(100):
            status, _ = await get(dashboard, f"/chat/{CHAT_A}/")
            assert status == 403
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert 1 <= len(refused) <= 2, [r.getMessage() for r in refused]


@pytest.fixture
def endpoint() -> Iterator[MetricsEndpoint]:
    server = MetricsEndpoint("127.0.0.1", 0, metrics.REGISTRY, max_connections=CAP,
                             header_timeout=30)
    yield server
    server.shutdown()
    server.server_close()


def scrape(port: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.status == 200
        body: bytes = response.read()
        return body


async def test_half_open_connections_leave_metrics_answering_on_one_thread(
        endpoint: MetricsEndpoint) -> None:
    threads = threading.active_count()
    crowd = await idle_connections(endpoint.server_port, 3 * IDLE, b"GET /metr")
    try:
        started = time.monotonic()
        body = await asyncio.wait_for(asyncio.to_thread(scrape, endpoint.server_port), 10)
        assert b"quizbot_" in body and time.monotonic() - started < 5
        assert threading.active_count() <= threads + 1  # the scrape's own helper thread
        assert endpoint.open <= CAP
    finally:
        close_all(crowd)


async def test_a_metrics_request_head_must_come_in_time() -> None:
    server = MetricsEndpoint("127.0.0.1", 0, metrics.REGISTRY, header_timeout=0.3)
    try:
        slow = await idle_connections(server.server_port, 3, b"GET /metrics HTTP/1.1\r\n")
        for reader, _ in slow:
            assert await asyncio.wait_for(reader.read(), 5) == b""
        close_all(slow)
        status, _ = await get(server.server_port, "/nothing")
        assert status == 404
    finally:
        server.shutdown()
        server.server_close()

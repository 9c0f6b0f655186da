"""The Prometheus endpoint: scraped over HTTP, its counters equal what storage holds; it
listens only when QUIZBOT_METRICS_LISTEN is set, and only while the bot runs."""

from __future__ import annotations

import asyncio
import random
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot import metrics
from bot.adapters import ConnectionLost
from bot.app import open_service, run_adapters
from bot.content import Catalog
from bot.core.clock import Clock
from bot.core.models import AnswerStatus, Chat, Person
from bot.core.ports import NoMeter, Storage
from bot.core.service import QuizService
from bot.settings import Settings, SettingsError, load_settings
from bot.storage import SqliteStorage

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(port: int) -> str:
    with NO_PROXY.open(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.status == 200
        return str(response.read().decode("utf-8"))


async def scrape(port: int) -> Samples:
    text = await asyncio.to_thread(_get, port)
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text) for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def endpoint() -> Iterator[int]:
    server = metrics.serve("127.0.0.1", 0)
    yield server.server_port
    server.shutdown()
    server.server_close()


async def test_scraped_counters_equal_the_stored_answers(
    endpoint: int, sample_catalog: Catalog, storage: Storage, clock: Clock
) -> None:
    service = QuizService(sample_catalog, storage, clock, random.Random(7),
                          meter=metrics.METER)
    quiz = next(iter(sample_catalog))
    shown = await service.questions.post(Chat("tg:-100", "group"), quiz.id,
                                         quiz.questions[0].id, "en")
    before = await scrape(endpoint)

    crowd = [Person(f"tg:{i}", f"person {i}") for i in range(1, 61)]
    results = await asyncio.gather(*(service.answer(shown.post_id, p, i % 2)
                                     for i, p in enumerate(crowd)))
    again = await asyncio.gather(*(service.answer(shown.post_id, p, 1) for p in crowd[:7]))
    refused = await service.answer(shown.post_id, Person("dc:5", "d"), 99)  # no such option
    await service.questions.close(shown.post_id, quiet=True)
    late = await service.answer(shown.post_id, Person("tg:999", "late"), 0)
    assert {r.status for r in results} == {AnswerStatus.ACCEPTED}
    assert {r.status for r in again} == {AnswerStatus.ALREADY_ANSWERED}
    assert (refused.status, late.status) == (AnswerStatus.INVALID_OPTION, AnswerStatus.CLOSED)

    after = await scrape(endpoint)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    stored = [await storage.answer_of(shown.post_id, p.key) for p in crowd]
    stored.append(await storage.answer_of(shown.post_id, "tg:999"))
    assert delta("quizbot_answers_total", platform="telegram", outcome="accepted") \
        == sum(a is not None for a in stored) == 60
    assert delta("quizbot_answers_total", platform="telegram", outcome="repeat") == 7
    assert delta("quizbot_answers_total", platform="telegram", outcome="closed") == 1
    assert delta("quizbot_answers_total", platform="discord", outcome="refused") == 1
    assert delta("quizbot_answer_seconds_count", platform="telegram") == 68
    assert delta("quizbot_answer_seconds_count", platform="discord") == 1
    if isinstance(storage, SqliteStorage):
        # every accepted answer was one write, committed in batches the histogram saw
        assert delta("quizbot_sqlite_writer_batch_size_sum") >= 60
        await storage.materialize()
        assert value(await scrape(endpoint), "quizbot_materializer_lag_answers") == 0


def settings_for(tmp_path: Path, **overrides: object) -> Settings:
    return load_settings(quizbot_database=tmp_path / "quiz.db", quizbot_cache_dir="off",
                         _env_file=None, **overrides)


def refused(port: int) -> bool:
    try:
        _get(port)
    except (urllib.error.URLError, ConnectionError):
        return True
    return False


async def running_bot(settings: Settings, port: int) -> tuple[bool, bool]:
    """Whether /metrics answered on `port` while `quizbot run` ran, and after it stopped."""
    async with open_service(settings) as service:
        bot = asyncio.create_task(run_adapters(service, [], settings))
        try:
            # the endpoint is started before run_adapters first waits: a few turns of the
            # loop bring it there
            for _ in range(5):
                await asyncio.sleep(0)
            assert not bot.done()
            during = not await asyncio.to_thread(refused, port)
        finally:
            bot.cancel()
            with pytest.raises(asyncio.CancelledError):
                await bot
        after = not await asyncio.to_thread(refused, port)
    return during, after


async def test_the_endpoint_listens_only_while_the_bot_runs(tmp_path: Path) -> None:
    port = free_port()
    settings = settings_for(tmp_path, quizbot_metrics_listen=f"127.0.0.1:{port}")
    assert await running_bot(settings, port) == (True, False)


async def test_unset_nothing_listens_and_nothing_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUIZBOT_METRICS_LISTEN", raising=False)
    port = free_port()
    settings = settings_for(tmp_path)
    assert settings.metrics_listen is None
    async with open_service(settings) as service:
        assert isinstance(service.meter, NoMeter)
    assert await running_bot(settings, port) == (False, False)


async def test_a_taken_port_ends_the_start_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = settings_for(tmp_path, quizbot_metrics_listen=f"127.0.0.1:{port}")
        async with open_service(settings) as service:
            with pytest.raises(ConnectionLost, match=f"QUIZBOT_METRICS_LISTEN=127.0.0.1:{port}"):
                await run_adapters(service, [], settings)


@pytest.mark.parametrize("bad", ["9100", "localhost:", "0.0.0.0:70000", "host:port"])
def test_a_malformed_address_is_refused_by_name(bad: str) -> None:
    with pytest.raises(SettingsError, match=r"QUIZBOT_METRICS_LISTEN: .*host:port"):
        load_settings(quizbot_metrics_listen=bad, _env_file=None)


def test_the_dashboard_and_the_docs_name_only_metrics_that_exist() -> None:
    exposed = {sample.name for family in metrics.REGISTRY.collect() for sample in family.samples}
    exposed |= {family.name for family in metrics.REGISTRY.collect()}  # labelled, none yet
    docs = Path(__file__).resolve().parent.parent / "docs"
    for name in ("grafana-quizbot.json", "deployment.md"):
        text = (docs / name).read_text(encoding="utf-8")
        named = set(re.findall(r"\bquizbot_[a-z_]+", text)) - {"quizbot_metrics_listen"}
        unknown = {
            n for n in named
            if n not in exposed and re.sub(r"_(total|bucket|sum|count)$", "", n) not in exposed
        }
        assert named and not unknown, f"{name} names {sorted(unknown)}"

"""The operator's Prometheus metrics: every metric object, and the endpoint that serves them.

Served at `/metrics` on QUIZBOT_METRICS_LISTEN (host:port) by bot/metrics_endpoint.py, one
daemon thread with its own event loop and bounded connections: a scrape never waits for the
bot's event loop, and a busy loop never delays a scrape. Unset, nothing listens and the core
counts nothing (it gets `NoMeter`); the SQLite writer's few per-batch updates run either way.

The core reports through its `Meter` port (`PrometheusMeter` below); storage and the adapters,
outside the core, update the objects here directly. Labels are few and fixed (platform,
outcome, operation): never a person, a chat or a post. Counters and gauges of
prometheus_client are thread-safe, so the SQLite writer thread updates them itself.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Iterable
from itertools import accumulate
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    gc_collector,
    platform_collector,
    process_collector,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from bot.metrics_endpoint import MetricsEndpoint

log = logging.getLogger(__name__)

# one registry of quizbot's own (plus the process's CPU, memory and GC), not the library's
# global one, so importing a library that registers metrics of its own changes nothing here
REGISTRY = CollectorRegistry()
process_collector.ProcessCollector(registry=REGISTRY)
platform_collector.PlatformCollector(registry=REGISTRY)
gc_collector.GCCollector(registry=REGISTRY)

# quizbot_answer_seconds' buckets (seconds; +Inf follows)
ANSWER_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
WRITER_QUEUE = Gauge(
    "quizbot_sqlite_writer_queue_depth", "Writes queued for the SQLite writer thread",
    registry=REGISTRY,
)
WRITER_BATCH = Histogram(
    "quizbot_sqlite_writer_batch_size", "Writes committed together in one SQLite transaction",
    registry=REGISTRY, buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000),
)
MATERIALIZER_LAG = Gauge(
    "quizbot_materializer_lag_answers",
    "Committed answers not yet applied to the boards (SQLite: this process's last look)",
    registry=REGISTRY,
)
SCHEDULER_TICKS = Counter(
    "quizbot_scheduler_ticks", "Scheduler rounds run", registry=REGISTRY,
)
SCHEDULER_OVERDUE = Counter(
    "quizbot_scheduler_overdue_ticks",
    "Scheduler rounds that took longer than their interval (the next round's work started late)",
    registry=REGISTRY,
)
SCHEDULER_SECONDS = Histogram(
    "quizbot_scheduler_tick_seconds", "How long one scheduler round took", registry=REGISTRY,
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
API_ERRORS = Counter(
    "quizbot_platform_api_errors",
    "Platform API calls that failed (network, server or refused), by platform and operation",
    ["platform", "operation"], registry=REGISTRY,
)
RATE_LIMIT_WAITS = Counter(
    "quizbot_platform_rate_limit_waits", "Times a platform said to wait (HTTP 429 / RetryAfter)",
    ["platform"], registry=REGISTRY,
)
RATE_LIMIT_SECONDS = Counter(
    "quizbot_platform_rate_limit_wait_seconds", "Seconds a platform asked the bot to wait",
    ["platform"], registry=REGISTRY,
)


class _Latency:
    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(ANSWER_BUCKETS) + 1)  # per bucket, not cumulative; +Inf last
        self.total = 0.0


class PrometheusMeter(Collector):
    """The core's Meter port. Answers, the hot path, are counted in plain ints (a dict update
    and a bisect: a prometheus_client Counter and Histogram cost a lock each, and ~2 µs an
    answer together) and turned into the `quizbot_answers` counter and the
    `quizbot_answer_seconds` histogram at each scrape. `answered` is called from the event
    loop only; a scrape thread reading a count mid-update sees it one answer behind at most.
    One per process (`METER`): its series are registered once."""

    def __init__(self, registry: CollectorRegistry | None = REGISTRY) -> None:
        self._answers: dict[tuple[str, str], int] = {}  # (platform, outcome) -> answers
        self._latency: dict[str, _Latency] = {}  # platform -> its histogram
        if registry is not None:
            registry.register(self)

    def answered(self, platform: str, outcome: str, seconds: float) -> None:
        answers = self._answers
        key = (platform, outcome)
        answers[key] = answers.get(key, 0) + 1
        latency = self._latency.get(platform)
        if latency is None:
            latency = self._latency[platform] = _Latency()
        latency.counts[bisect_left(ANSWER_BUCKETS, seconds)] += 1  # le: seconds <= bound
        latency.total += seconds

    def ticked(self, seconds: float, overdue: bool) -> None:
        SCHEDULER_TICKS.inc()
        SCHEDULER_SECONDS.observe(seconds)
        if overdue:
            SCHEDULER_OVERDUE.inc()

    def collect(self) -> Iterable[Metric]:
        answers = CounterMetricFamily(
            "quizbot_answers", "Answers handled, by platform and outcome (accepted: stored; "
            "repeat: the person had answered; closed: too late; refused: not answerable)",
            labels=["platform", "outcome"],
        )
        for (platform, outcome), count in list(self._answers.items()):
            answers.add_metric([platform, outcome], count)
        yield answers
        seconds = HistogramMetricFamily(
            "quizbot_answer_seconds",
            "From the core receiving an answer to its commit (or refusal)", labels=["platform"],
        )
        for platform, latency in list(self._latency.items()):
            counts, total = list(latency.counts), latency.total
            cumulative = list(accumulate(counts))
            buckets = [(repr(b), c) for b, c in zip(ANSWER_BUCKETS, cumulative,
                                                                strict=False)]
            buckets.append(("+Inf", cumulative[-1]))
            seconds.add_metric([platform], buckets, sum_value=total)
        yield seconds


METER = PrometheusMeter()


def api_error(platform: str, operation: str) -> None:
    API_ERRORS.labels(platform, operation).inc()


def rate_limited(platform: str, seconds: float) -> None:
    RATE_LIMIT_WAITS.labels(platform).inc()
    RATE_LIMIT_SECONDS.labels(platform).inc(max(0.0, seconds))


def serve(host: str, port: int) -> MetricsEndpoint:
    """Serve /metrics on host:port from a daemon thread (bot/metrics_endpoint.py: bounded
    connections, not a thread each); OSError if the port is taken."""
    from bot.metrics_endpoint import MetricsEndpoint

    server = MetricsEndpoint(host, port, REGISTRY)
    log.info("metrics at http://%s:%d/metrics", host, port)
    return server

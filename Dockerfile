# syntax=docker/dockerfile:1
# Pin the base by digest for reproducible builds, e.g.
#   FROM python:3.11-slim@sha256:<digest>   (docker buildx imagetools inspect python:3.11-slim)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    QUIZBOT_DATABASE=/data/quizbot.db \
    QUIZBOT_CONTENT_DIR=/app/content

WORKDIR /app
# Charts and question cards (bot/reports/): Noto fonts for Latin, Bengali and Devanagari and
# Noto Sans Mono for code, found through fontconfig; FriBiDi, which Pillow's raqm layout loads
# to shape them; Cairo, which draws a pack's SVG images on cards (cairosvg).
RUN apt-get update \
    && apt-get install -y --no-install-recommends fontconfig fonts-noto-core fonts-noto-mono \
       libfribidi0 libcairo2 \
    && rm -rf /var/lib/apt/lists/*
# /backups: where `quizbot db backup` writes when a volume is mounted there (docs/deployment.md)
RUN useradd --create-home --uid 10001 quizbot && mkdir /data /backups \
    && chown quizbot:quizbot /data /backups

# Dependencies in their own layer: editing the code or the packs does not reinstall them.
COPY pyproject.toml README.md ./
RUN mkdir bot && touch bot/__init__.py && pip install . && pip uninstall -y quizbot

COPY bot ./bot
COPY content ./content
RUN pip install --no-deps . && quizbot content validate

USER quizbot
# The content cache (validated packs by hash) is /home/quizbot/.cache/quizbot in the container;
# QUIZBOT_CACHE_DIR=/data/cache keeps it on the volume, QUIZBOT_CACHE_DIR=off disables it.
VOLUME ["/data"]
# `quizbot run` drains on SIGTERM within 8 s, below Docker's default 10 s stop timeout
# (docker stop -t / stop_grace_period: give it at least 10 s).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["quizbot", "health"]
CMD ["quizbot", "run"]

# syntax=docker/dockerfile:1
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    QUIZBOT_DATABASE=/data/quizbot.db \
    QUIZBOT_CONTENT_DIR=/app/content

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY content ./content
RUN pip install . \
    && useradd --create-home --uid 10001 quizbot \
    && mkdir /data && chown quizbot:quizbot /data \
    && quizbot content validate

USER quizbot
VOLUME ["/data"]
CMD ["quizbot", "run"]

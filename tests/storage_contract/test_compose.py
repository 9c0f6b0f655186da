"""compose.yaml stays a valid deployment (no Docker engine runs in CI, so this is what is
checked): PostgreSQL with a volume and a healthcheck; several bot processes from this image on
one database, started once it is healthy, splitting Discord's shards between them and sharing
the Telegram webhook; every setting one the bot accepts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from bot.settings import Settings, parse_shard_ids
from bot.storage.postgres.url import DatabaseUrl

ROOT = Path(__file__).resolve().parent.parent.parent


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's ${NAME}, ${NAME:-default} and ${NAME:?error} against `env`."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name, op, default = match.group(1), match.group(2) or "", match.group(3) or ""
        if name in env and (env[name] or op != ":-"):
            return env[name]
        assert op != ":?", f"${{{name}}} is required: {default}"
        return default

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_compose_yaml_is_a_postgres_deployment_of_several_bots() -> None:
    spec = compose()
    services = spec["services"]
    env = {"POSTGRES_PASSWORD": "s3cret", "TELEGRAM_BOT_TOKEN": "123:abc",
           "QUIZBOT_TELEGRAM_WEBHOOK_URL": "https://quiz.example.org/telegram",
           "QUIZBOT_TELEGRAM_WEBHOOK_SECRET": "webhook_secret", "DISCORD_BOT_TOKEN": "x.y.z"}
    services = interpolate(services, env)

    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:")
    volume = postgres["volumes"][0].split(":")[0]
    assert volume in spec["volumes"], "the data lives in a named volume"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    database = postgres["environment"]["POSTGRES_DB"]
    user = postgres["environment"]["POSTGRES_USER"]

    bots = {name: s for name, s in services.items() if name.startswith("bot")}
    assert len(bots) >= 2
    shards: list[int] = []
    counts = set()
    for name, bot in bots.items():
        assert bot["build"] == "." and (ROOT / "Dockerfile").is_file(), name
        assert bot["depends_on"]["postgres"]["condition"] == "service_healthy", name
        assert bot["stop_grace_period"] in ("10s", "12s", "15s"), name
        environment = bot["environment"]
        url = DatabaseUrl(environment["QUIZBOT_DATABASE"])
        assert url.get_secret_value() == \
            f"postgresql://{user}:s3cret@postgres:5432/{database}", name
        assert "s3cret" not in str(url)
        settings = Settings(
            _env_file=None, **{k.lower(): v for k, v in environment.items() if v != ""}
        )
        assert settings.quizbot_database == url
        shards += parse_shard_ids(environment["QUIZBOT_DISCORD_SHARDS"])
        counts.add(environment["QUIZBOT_DISCORD_SHARD_COUNT"])
        assert environment["QUIZBOT_TELEGRAM_WEBHOOK_URL"] == env["QUIZBOT_TELEGRAM_WEBHOOK_URL"]
        assert environment["QUIZBOT_TELEGRAM_WEBHOOK_SECRET"] == \
            env["QUIZBOT_TELEGRAM_WEBHOOK_SECRET"]
    assert len(counts) == 1, "every process agrees on the shard count"
    assert sorted(shards) == list(range(int(counts.pop()))), "each shard in one process"


def test_compose_yaml_refuses_to_start_without_a_password() -> None:
    spec = compose()
    try:
        interpolate(spec["services"]["postgres"], {})
    except AssertionError as exc:
        assert "POSTGRES_PASSWORD" in str(exc)
    else:
        raise AssertionError("a database without a password would start")

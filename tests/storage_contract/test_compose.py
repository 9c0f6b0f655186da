"""compose.yaml stays a valid deployment (no Docker engine runs in CI, so this is what is
checked; `docker compose config` too where Docker exists): PostgreSQL with a volume and a
healthcheck; several bot processes from this image on one database, started once it is
healthy, splitting Discord's shards between them and sharing the Telegram webhook (behind the
`webhook` profile's TLS proxy) or electing one poller; every setting one the bot accepts; a
token in `.env` is all it needs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
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


def bots_of(services: dict[str, Any]) -> dict[str, Any]:
    return {name: s for name, s in services.items() if name.startswith("bot")}


def variables(text: str) -> set[str]:
    return set(re.findall(r"\$\{(\w+)", text))


def test_the_database_password_comes_from_dotenv_to_both_sides() -> None:
    services = interpolate(compose()["services"], {"POSTGRES_PASSWORD": "from-dotenv"})
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == "from-dotenv"
    for name, bot in bots_of(services).items():
        url = DatabaseUrl(bot["environment"]["QUIZBOT_DATABASE"])
        assert ":from-dotenv@postgres:" in url.get_secret_value(), name


def test_a_token_alone_is_enough_and_telegram_is_polled_by_one_elected_process() -> None:
    """`.env` with only TELEGRAM_BOT_TOKEN (or only DISCORD_BOT_TOKEN): every process starts
    with valid settings; long polling, each process with its own stable instance name (the
    election of the one poller), PostgreSQL unpublished on a network only the bots share."""
    spec = compose()
    for env in ({"TELEGRAM_BOT_TOKEN": "123:abc"}, {"DISCORD_BOT_TOKEN": "x.y.z"}):
        services = interpolate(spec["services"], env)
        password = services["postgres"]["environment"]["POSTGRES_PASSWORD"]
        assert password
        instances = set()
        for name, bot in bots_of(services).items():
            environment = bot["environment"]
            settings = Settings(
                _env_file=None, **{k.lower(): v for k, v in environment.items() if v != ""}
            )
            assert settings.telegram_webhook is None, name  # long polling
            assert settings.quizbot_database.get_secret_value().startswith(  # type: ignore[union-attr]
                f"postgresql://quizbot:{password}@postgres:5432/"), name
            instances.add(settings.quizbot_instance)
        assert len(instances) == len(bots_of(services)) and None not in instances
    postgres = spec["services"]["postgres"]
    assert "ports" not in postgres, "the database is not published"
    [network] = postgres["networks"]
    assert spec["networks"][network]["internal"] is True
    for name, bot in bots_of(spec["services"]).items():
        assert network in bot["networks"] and "default" in bot["networks"], name


def test_every_long_running_service_has_a_healthcheck() -> None:
    for name, service in compose()["services"].items():
        test = service["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL"), name
    for name, bot in bots_of(compose()["services"]).items():
        assert bot["healthcheck"]["test"] == ["CMD", "quizbot", "health"], name


def test_the_webhook_profile_adds_a_tls_proxy_in_front_of_every_bot() -> None:
    spec = compose()
    services = interpolate(spec["services"], {"QUIZBOT_WEBHOOK_DOMAIN": "quiz.example.org"})
    caddy = services["caddy"]
    assert caddy["profiles"] == ["webhook"]
    assert all("profiles" not in s for n, s in services.items() if n != "caddy")
    assert "443:443" in caddy["ports"]
    assert caddy["environment"]["QUIZBOT_WEBHOOK_DOMAIN"] == "quiz.example.org"
    mounted = {v.split(":")[1]: v.split(":")[0] for v in caddy["volumes"]}
    caddyfile = (ROOT / mounted["/etc/caddy/Caddyfile"]).read_text(encoding="utf-8")
    assert "{$QUIZBOT_WEBHOOK_DOMAIN}" in caddyfile
    volumes = [v.split(":")[0] for v in caddy["volumes"] if not v.startswith(".")]
    assert volumes and all(v in spec["volumes"] for v in volumes), "certificates are kept"
    upstreams = re.search(r"reverse_proxy ([^{]+)\{", caddyfile)
    assert upstreams is not None
    bots = bots_of(services)
    assert sorted(upstreams.group(1).split()) == sorted(
        f"{name}:{bot['environment']['QUIZBOT_TELEGRAM_WEBHOOK_LISTEN'].rsplit(':')[1]}"
        for name, bot in bots.items())
    assert all(bot["expose"] == ["8443"] for bot in bots.values())
    assert caddy["networks"] == ["default"], "the proxy cannot reach the database"


def test_env_example_names_every_variable_compose_reads() -> None:
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    named = set(re.findall(r"^(\w+)=", example, re.MULTILINE))
    read = variables((ROOT / "compose.yaml").read_text(encoding="utf-8")) | variables(
        (ROOT / "Caddyfile").read_text(encoding="utf-8").replace("{$", "${"))
    assert read - named == set()
    assert "POSTGRES_PASSWORD" in named


def test_docker_compose_accepts_the_file(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker here: compose.yaml is checked by the YAML tests above only")
    plugin = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30,
                            check=False)
    if plugin.returncode != 0:
        pytest.skip("docker has no compose plugin here: compose.yaml is checked by the YAML "
                    "tests above only")
    ran = subprocess.run(
        [docker, "compose", "-f", str(ROOT / "compose.yaml"), "--profile", "webhook",
         "config", "--quiet"],
        cwd=tmp_path, env={**os.environ, "TELEGRAM_BOT_TOKEN": "123:abc"},
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert ran.returncode == 0, ran.stderr

"""Configuration from environment variables and an optional .env file (pydantic-settings)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AnyUrl, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

_SOURCE_CONTENT = Path(__file__).resolve().parent.parent / "content"
# a source checkout has content/ beside bot/; an installed package looks in the working directory
BUNDLED_CONTENT = _SOURCE_CONTENT if _SOURCE_CONTENT.is_dir() else Path("content")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False
    )

    telegram_bot_token: SecretStr | None = None
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    discord_bot_token: SecretStr | None = None
    discord_api_base_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str = "wss://gateway.discord.gg/"
    discord_guild_id: int | None = None
    quizbot_database: Path = Path("data/quizbot.db")
    quizbot_content_dir: Path = BUNDLED_CONTENT
    # how long a /quiz question stays open in a group or channel before its summary
    quizbot_question_seconds: int = Field(default=600, ge=10, le=2_628_000)
    quizbot_log_level: str = "INFO"

    @field_validator("telegram_bot_token", "discord_bot_token", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("telegram_api_base_url", "discord_api_base_url", "discord_gateway_url")
    @classmethod
    def _url(cls, value: str) -> str:
        AnyUrl(value)  # raises a ValueError naming the problem
        return value

    @field_validator("quizbot_log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError("must be DEBUG, INFO, WARNING or ERROR")
        return value.upper()


class SettingsError(Exception):
    """One line per bad variable, naming it; never the value (it may be a token)."""


def load_settings(**overrides: object) -> Settings:
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        lines = [
            f"{str(err['loc'][0]).upper()}: {err['msg']}" for err in exc.errors(include_input=False)
        ]
        raise SettingsError("; ".join(lines)) from None

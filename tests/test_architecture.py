"""The import arrows point one way: adapters -> core -> ports <- storage.

And an adapter holds no quiz rule: it reaches the core only through the QuizService facade
(never storage, never the parts that decide what closes or who may answer).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parent.parent / "bot"
PLATFORM_LIBRARIES = ("telegram", "discord", "aiosqlite", "sqlite3", "asyncpg", "aiohttp")


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def modules(package: str) -> list[Path]:
    return sorted((BOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", modules("core"), ids=lambda p: p.name)
def test_the_core_imports_no_platform_and_no_storage(path: Path) -> None:
    bad = {
        name for name in imports(path)
        if name.split(".")[0] in PLATFORM_LIBRARIES
        or name.startswith(("bot.storage", "bot.adapters", "bot.app", "bot.cli", "bot.settings"))
    }
    assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", modules("storage"), ids=lambda p: p.name)
def test_storage_depends_only_on_the_core_ports(path: Path) -> None:
    bad = {
        name for name in imports(path)
        if name.startswith(("bot.adapters", "bot.app", "bot.cli"))
        or (name.startswith("bot.core") and name not in {"bot.core.ports", "bot.core.schedule"})
    }
    assert not bad, f"{path.name} imports {sorted(bad)}"


# What decides a chat rule. An adapter that needs one of these is asking for a core use case.
RULE_ATTRIBUTES = {
    "storage", "questions", "runs", "answers", "daily", "asking", "delivery", "locales",
    "close", "close_open", "close_due", "summary_posted",
}


@pytest.mark.parametrize("path", modules("adapters"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_adapters_reach_the_core_only_through_the_facade(path: Path) -> None:
    if path.name == "console.py":
        pytest.skip("the console runs one person's quiz in order: it drives runs directly")
    used = {
        node.attr for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
        and node.value.attr == "service" and node.attr in RULE_ATTRIBUTES
    }
    assert not used, f"{path} reaches into the core: service.{', service.'.join(sorted(used))}"

"""The import arrows point one way: adapters -> core -> ports <- storage.

The core's parts depend on the storage's role ports (answers, posts, boards...), not on the
whole `Storage`, which only the facade is wired with; only a database's own package imports
its driver.

And an adapter holds no quiz rule: it reaches the core only through the QuizService facade
(never storage, never the parts that decide what closes or who may answer).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parent.parent / "bot"
PLATFORM_LIBRARIES = ("telegram", "discord", "aiosqlite", "sqlite3", "asyncpg", "aiohttp")
DATABASE_DRIVERS = ("sqlite3", "aiosqlite", "asyncpg")
WIRING = {"ports.py", "service.py"}  # the ports themselves, and the facade that wires the parts


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
        or (name.startswith("bot.core")
            and name not in {"bot.core.ports", "bot.core.schedule", "bot.core.deck"})
    }
    assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize(
    "path", [p for p in modules("core") if p.name not in WIRING], ids=lambda p: p.name
)
def test_the_core_parts_take_role_ports_not_the_whole_storage(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    whole = [
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "bot.core.ports"
        and any(alias.name == "Storage" for alias in node.names)
    ]
    assert not whole, f"{path.name}:{whole[0]} imports Storage: take the role ports it uses"
    # another part's storage (self.questions.storage) is a port this part did not declare
    borrowed = [
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "storage"
        and isinstance(node.value, ast.Attribute)
    ]
    assert not borrowed, f"{path.name}:{borrowed[0]} uses another part's storage"


@pytest.mark.parametrize(
    "path", [p for p in modules("storage")
             if not {"sqlite", "postgres"} & set(p.relative_to(BOT / "storage").parts)],
    ids=lambda p: str(p.relative_to(BOT / "storage")),
)
def test_only_a_database_package_imports_its_driver(path: Path) -> None:
    drivers = {name for name in imports(path) if name.split(".")[0] in DATABASE_DRIVERS}
    assert not drivers, f"{path.name} imports {sorted(drivers)}: only sqlite/ and postgres/ may"


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

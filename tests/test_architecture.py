"""The import arrows point one way: adapters -> core -> ports <- storage.

The core's parts depend on the storage's role ports (answers, posts, boards...), not on the
whole `Storage`, which only the facade is wired with; only a database's own package imports
its driver.

And an adapter holds no quiz rule: it reaches the core through the doors named here (DOORS):
QuizService's own methods and the named methods of the use-case objects it exposes, never the
storage, never the parts that decide what closes or who may answer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.core.service import QuizService

BOT = Path(__file__).resolve().parent.parent / "bot"
PLATFORM_LIBRARIES = ("telegram", "discord", "aiosqlite", "sqlite3", "asyncpg", "aiohttp")
DATABASE_DRIVERS = ("sqlite3", "aiosqlite", "asyncpg")
WIRING = {"service.py"}  # the facade that wires the parts (the ports themselves: core/ports/)


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
    "path", [p for p in modules("core")
             if p.name not in WIRING and p.parent.name != "ports"], ids=lambda p: p.name
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


# The doors an adapter may use into the core: QuizService's own methods (what composes two
# parts, or adds a platform-neutral step), and these methods of the use-case objects it exposes
# (each part's `service.<part>`); core modules' public names are imported. Everything else is
# shut: the storage, the parts that score answers or close questions (answers, rounds, the
# questions' closing), so an adapter holds no quiz rule.
DOORS: dict[str, frozenset[str]] = {part: frozenset(methods.split()) for part, methods in {
    "asking": "quiz",
    "authoring": "may_author start add photo view undo name discard publish unpublish",
    "boards": "stats",
    "cards": "card uploaded",
    "chat_settings": "get change",
    "clock": "now",
    "daily": "set status",
    "dashboard": "link revoke",
    "delivery": "connect disconnect question_sending step_started step_refused",
    "item_analysis": "for_chat",
    "live": "join pause skip end place",
    "locales": "for_person for_audience",
    "privacy": "wants_delete",
    "problem_reports": "report report_last report_words for_chat resolve_in_chat titles title "
                       "is_question",
    "questions": "quizzes show bind post_id_for live_count open_typed",
    "review_deck": "apkg",
    "spaced": "start next_due stats set_reminder reminder reminder_off",
}.items()}
# The console runs one person's quiz in order, a question after the other: it drives the run.
CONSOLE_DOORS = {**DOORS, "runs": frozenset({"active", "current", "start"}),
                 "questions": DOORS["questions"] | {"quiz_named"}, "catalog": frozenset()}
# The service's plain values an adapter reads (the quiz catalog for autocomplete).
VALUES = frozenset({"catalog"})


def facade_methods() -> frozenset[str]:
    return frozenset(name for name, value in vars(QuizService).items()
                     if callable(value) and not name.startswith("_"))


def is_service(node: ast.expr) -> bool:
    """`service`, `self.service`, `cmd.data.service`: the facade itself."""
    return (isinstance(node, ast.Name) and node.id == "service") or \
        (isinstance(node, ast.Attribute) and node.attr == "service")


def doors_used(source: str, doors: dict[str, frozenset[str]]) -> list[str]:
    """What the code reaches through the facade that is no door: `service.<x>` that is not
    one of its methods or values, `service.<part>.<y>` (also through a local name given the
    part, `runs = self.service.runs`) with `y` not among the part's doors."""
    methods = facade_methods()
    shut: list[str] = []
    for scope in ast.walk(ast.parse(source)):
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        nodes = [n for n in ast.walk(scope)]
        parents = {child: node for node in nodes for child in ast.iter_child_nodes(node)}
        aliases = {
            node.targets[0].id: node.value.attr for node in nodes
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Attribute)
            and is_service(node.value.value) and node.value.attr in doors
        }
        for node in nodes:
            if not isinstance(node, ast.Attribute):
                continue
            if is_service(node.value):
                part, parent = node.attr, parents.get(node)
                if part in methods or part in VALUES:
                    continue
                if part not in doors:
                    shut.append(f"service.{part}")
                elif isinstance(parent, ast.Attribute) and parent.value is node:
                    if parent.attr not in doors[part]:
                        shut.append(f"service.{part}.{parent.attr}")
                elif not (isinstance(parent, ast.Assign) and aliases.get(
                        getattr(parent.targets[0], "id", "")) == part):
                    shut.append(f"service.{part}")  # the whole part handed on
            elif isinstance(node.value, ast.Name) and node.value.id in aliases:
                part = aliases[node.value.id]
                if node.attr not in doors[part]:
                    shut.append(f"service.{part}.{node.attr}")
    return sorted(set(shut))


def test_every_door_is_a_method_of_a_part_the_facade_exposes() -> None:
    init = next(node for node in ast.walk(ast.parse((BOT / "core" / "service.py").read_text(
        encoding="utf-8"))) if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    parts = {target.attr for node in ast.walk(init) if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Attribute)}
    missing = sorted(set(CONSOLE_DOORS) - parts)
    assert not missing, f"QuizService has no part {missing}"
    from bot.core import (  # the classes of the parts, to find each door on
        asking,
        authoring,
        boards,
        cards,
        chat_settings,
        clock,
        daily,
        dashboard,
        delivery,
        item_analysis,
        live,
        locales,
        privacy,
        problem_reports,
        questions,
        review,
        review_export,
        runs,
    )
    classes = {
        "asking": asking.Asking, "authoring": authoring.Authoring, "boards": boards.Boards,
        "cards": cards.Cards, "chat_settings": chat_settings.ChatSettingsRules,
        "clock": clock.Clock, "daily": daily.Daily, "dashboard": dashboard.DashboardAccess,
        "delivery": delivery.Delivery, "item_analysis": item_analysis.ItemAnalysis,
        "live": live.Live, "locales": locales.Locales, "privacy": privacy.Privacy,
        "problem_reports": problem_reports.ProblemReports, "questions": questions.Questions,
        "review_deck": review_export.ReviewExport, "spaced": review.Review, "runs": runs.Runs,
    }
    for part, doors in CONSOLE_DOORS.items():
        for door in doors:
            assert callable(getattr(classes[part], door, None)), f"no {part}.{door}"


@pytest.mark.parametrize("path", modules("adapters"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_adapters_reach_the_core_only_through_its_doors(path: Path) -> None:
    doors = CONSOLE_DOORS if path.name == "console.py" else DOORS
    shut = doors_used(path.read_text(encoding="utf-8"), doors)
    assert not shut, f"{path} reaches into the core: {', '.join(shut)}"


@pytest.mark.parametrize("path", modules("adapters"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_adapters_import_the_core_public_names_and_no_storage(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = sorted(
        f"{node.module}.{alias.name}" for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
        and node.module.startswith(("bot.core", "bot.storage"))
        for alias in node.names
        if node.module.startswith("bot.storage") or alias.name.startswith("_")
    ) + sorted(name for name in imports(path) if name.startswith("bot.storage"))
    assert not bad, f"{path} imports {bad}"


def test_the_door_check_refuses_what_is_shut() -> None:
    planted = """
async def handler(cmd):
    await cmd.data.service.storage.get_post(1)
    await cmd.data.service.questions.close(1)
    await cmd.data.service.answers.answer(1, None, 0)
    rounds = cmd.data.service.rounds
    questions = cmd.data.service.questions
    await questions.close_due()
    handed(cmd.data.service.questions)
    await cmd.data.service.questions.show(1)
    await cmd.data.service.leaderboard(None)
"""
    assert doors_used(planted, DOORS) == [
        "service.answers", "service.questions", "service.questions.close",
        "service.questions.close_due", "service.rounds", "service.storage"]
    assert doors_used("service.runs.start(p, c, q, 'en')", DOORS) == ["service.runs"]
    assert doors_used("service.runs.start(p, c, q, 'en')", CONSOLE_DOORS) == []


@pytest.mark.parametrize("path", modules("storage/sqlite") + modules("storage/postgres"),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_neither_database_backend_imports_the_other(path: Path) -> None:
    """What both backends need (a backup's files, the copy's tables) lives in a neutral module
    under bot/storage; a flow that uses both (db copy, db backup) imports both from there."""
    other = "bot.storage.postgres" if path.parent.name == "sqlite" else "bot.storage.sqlite"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    bad = sorted(name for name in found if name == other or name.startswith(f"{other}."))
    assert not bad, f"{path} imports {bad}"

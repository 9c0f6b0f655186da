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
import re
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
            and name not in {"bot.core.ports", "bot.core.schedule", "bot.core.deck",
                             "bot.core.difficulty"})
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
    "assignments": "assign listed cancel title take",  # /assign (assignments.py)
    "authoring": "may_author start add photo view undo name discard publish unpublish",
    "boards": "stats",
    "cards": "card uploaded",
    "chat_settings": "get change",
    "clock": "now",
    "confidence": "asks chat_asks",  # whether a press waits for "How sure are you?"
    "daily": "set status",
    "dashboard": "link revoke",
    "delivery": "connect disconnect question_sending step_started step_refused",
    "item_analysis": "for_chat",
    "live": "join pause skip end place show lobby lobby_shown",
    "locales": "for_person for_audience",
    "privacy": "wants_delete",
    "problem_reports": "report report_last report_words for_chat resolve_in_chat titles title "
                       "is_question place",
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
        assignments,
        authoring,
        boards,
        cards,
        chat_analysis,
        chat_settings,
        clock,
        confidence_ask,
        daily,
        dashboard,
        delivery,
        live,
        locales,
        privacy,
        problem_reports,
        questions,
        quiz_runs,
        review,
        review_export,
    )
    classes = {
        "asking": asking.Asking, "assignments": assignments.Assignments,
        "authoring": authoring.Authoring, "boards": boards.Boards,
        "cards": cards.Cards, "chat_settings": chat_settings.ChatSettingsRules,
        "clock": clock.Clock, "confidence": confidence_ask.ConfidenceAsk,
        "daily": daily.Daily, "dashboard": dashboard.DashboardAccess,
        "delivery": delivery.Delivery, "item_analysis": chat_analysis.ItemAnalysis,
        "live": live.Live, "locales": locales.Locales, "privacy": privacy.Privacy,
        "problem_reports": problem_reports.ProblemReports, "questions": questions.Questions,
        "review_deck": review_export.ReviewExport, "spaced": review.Review, "runs": quiz_runs.Runs,
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


def core_import_graph(core: Path) -> dict[str, dict[str, int]]:
    """bot/core's modules -> the bot/core modules each imports (the first line that does),
    type-only imports (under TYPE_CHECKING) included: a cycle of annotations is still a cycle
    for a reader and for the first runtime import someone adds."""
    def name_of(path: Path) -> str:
        parts = path.relative_to(core.parent.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name_of(p): p for p in core.rglob("*.py")}
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                if target in modules and target != name:
                    found.setdefault(target, node.lineno)
        graph[name] = found
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            component.append(v)
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_cycles_finds_a_type_only_circle(tmp_path: Path) -> None:
    core = tmp_path / "bot" / "core"
    core.mkdir(parents=True)
    (core / "a.py").write_text("from bot.core.b import B\n")
    (core / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                               "    from bot.core.c import C\n")
    (core / "c.py").write_text("from . import a\n")
    (core / "d.py").write_text("import bot.core.a\n")
    graph = core_import_graph(core)
    assert graph["bot.core.b"] == {"bot.core.c": 3}
    assert cycles(graph) == [["bot.core.a", "bot.core.b", "bot.core.c"]]


def test_the_core_modules_import_each_other_in_no_circle() -> None:
    """Value types live in models.py, which imports no other part of bot/core, so a use
    case's module is imported for its rules, never for a type."""
    graph = core_import_graph(BOT / "core")
    found = cycles(graph)
    described = [
        " ".join(f"{m.removeprefix('bot.core.')} -> " + ", ".join(
            f"{w.removeprefix('bot.core.')}:{line}" for w, line in sorted(graph[m].items())
            if w in cycle) + ";" for m in cycle)
        for cycle in found
    ]
    assert not found, "\n".join(described)


ANSWER_PATH_NAME = re.compile(r"`((?:\w+/)*\w+\.py):\d+`\s+`([\w.]+)`")


def test_the_answer_paths_signposts_name_what_each_file_defines() -> None:
    """docs/architecture.md's path of one answer: every `file:line` `Name` it gives is a file
    that defines that name (a short path is read beside the full one named before it)."""
    doc = (BOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc[doc.index("**The path of one answer**"):doc.index("**Nothing confirmed")]
    found = ANSWER_PATH_NAME.findall(section)
    assert len(found) >= 20, found
    last_dir = BOT.parent
    wrong = []
    for given, name in found:
        if given.startswith("bot/"):
            path = BOT.parent / given
        else:
            path = next((d / given for d in (last_dir, *last_dir.parents)
                         if (d / given).is_file()), last_dir / given)
        last_dir = path.parent
        if not path.is_file():
            wrong.append(f"{given}: no such file")
            continue
        defined = {node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
                   if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        defined |= {f"{node.name}.{item.name}"
                    for node in ast.parse(path.read_text(encoding="utf-8")).body
                    if isinstance(node, ast.ClassDef) for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}
        if name not in defined:
            wrong.append(f"{given}: defines no {name}")
    assert not wrong, wrong

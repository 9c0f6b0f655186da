"""Each chat command is declared once (bot/core/commands.py), and each platform has what is
declared and nothing else: read from the real libraries, Telegram's Application handlers and
its command menu call, Discord's CommandTree; and /help shows the declared lines of the
commands registered there."""

from __future__ import annotations

import re
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any, cast

import pytest
from discord import app_commands
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.adapters.discord import help as discord_help
from bot.adapters.discord.client import build_bot
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.telegram import app as telegram_app
from bot.adapters.telegram import handlers, routes
from bot.adapters.telegram import help as telegram_help
from bot.adapters.telegram.context import BotData, TelegramApp
from bot.content.items import DEFAULT_LOCALE, LOCALES
from bot.core import commands
from bot.core.commands import Command, Line, Menu, On, Platform
from bot.core.help import Where
from bot.core.service import QuizService
from bot.i18n import translator


def disagreement(platform: str, declared: Iterable[str], registered: Iterable[str]) -> list[str]:
    """What a platform registers and does not declare, and the other way round."""
    declared, registered = set(declared), set(registered)
    return [f"{platform}: /{name} registered, not declared"
            for name in sorted(registered - declared)] + \
        [f"{platform}: /{name} declared, not registered" for name in sorted(declared - registered)]


def foreign_lines(platform: Platform, declarations: Iterable[Command]) -> list[str]:
    """/help lines that do not start with their own command as it is typed there."""
    return [
        line.text for command in declarations
        if (there := command.on(platform)) is not None
        for line in there.help
        if not re.match(rf"/{re.escape(command.name_on(platform) or '')}(\s|$)", line.text)
    ]


def telegram_application() -> TelegramApp:
    app: TelegramApp = (Application.builder().token("123:test")
                        .context_types(ContextTypes(bot_data=BotData)).updater(None).build())
    routes.register(app)
    return app


def telegram_commands(app: TelegramApp) -> dict[str, list[CommandHandler[Any, Any]]]:
    found: dict[str, list[CommandHandler[Any, Any]]] = {}
    for group in app.handlers.values():
        for handler in group:
            if isinstance(handler, CommandHandler):
                for name in handler.commands:
                    found.setdefault(name, []).append(handler)
    return found


async def discord_tree() -> app_commands.CommandTree[Any]:
    service = cast(QuizService, SimpleNamespace())
    bot = build_bot(service, ChannelPublisher(service))
    for cog in bot.cogs_to_add:  # what setup_hook does, without a login
        await bot.add_cog(cog)
    return bot.tree


def tree_names(tree: app_commands.CommandTree[Any]) -> set[str]:
    return {command.name for command in tree.get_commands()}


# Telegram --------------------------------------------------------------------------------

def test_telegram_registers_exactly_the_declared_commands() -> None:
    registered = telegram_commands(telegram_application())
    assert disagreement("telegram", commands.names("telegram"), registered) == []
    for command in commands.COMMANDS:
        name = command.name_on("telegram")
        if name is not None:  # the declared command's own handler takes it
            assert handlers.ROUTES[command.key].callback in \
                [h.callback for h in registered[name]], command.key


async def test_telegram_menu_is_the_declared_menu_in_every_language() -> None:
    sent: list[tuple[list[tuple[str, str]], str | None]] = []

    class MenuBot:
        async def set_my_commands(self, menu: list[Any], language_code: str | None) -> None:
            sent.append(([(c.command, c.description) for c in menu], language_code))

    await telegram_app.register_commands(cast(Any, MenuBot()))
    declared = [(c.key, c.menu) for c in commands.COMMANDS if c.menu is not None]
    assert len(sent) == len(LOCALES)
    for menu, code in sent:
        t = translator(code or DEFAULT_LOCALE)
        positions = {name: m.position for name, m in declared}
        assert menu == [(name, t.gettext(m.description))
                        for name, m in sorted(declared, key=lambda d: d[1].position)]
        assert [positions[name] for name, _ in menu] == sorted(positions.values())
    registered = telegram_commands(telegram_application())
    assert {name for name, _ in sent[0][0]} <= set(registered)


def test_telegram_help_is_the_declared_lines_of_registered_commands() -> None:
    registered = telegram_commands(telegram_application())
    assert telegram_help.ENTRIES == commands.help_entries("telegram", registered)
    assert telegram_help.ENTRIES == commands.help_entries("telegram")
    assert foreign_lines("telegram", commands.COMMANDS) == []


def test_a_handler_for_an_undeclared_command_is_refused() -> None:
    with pytest.raises(KeyError):
        handlers.handles("no-such-command")


def test_a_declared_command_without_its_handler_stops_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    routes_now = dict(handlers.ROUTES)
    del routes_now["stats"]
    monkeypatch.setattr(routes, "ROUTES", routes_now)
    with pytest.raises(LookupError, match="/stats"):
        routes.command_handlers()
    routes_now["stats"] = routes_now["no-such-command"] = handlers.ROUTES["stats"]
    with pytest.raises(LookupError, match="not declared: /no-such-command"):
        routes.command_handlers()


# Discord ---------------------------------------------------------------------------------

async def test_discord_tree_has_exactly_the_declared_commands() -> None:
    tree = await discord_tree()
    assert disagreement("discord", commands.names("discord"), tree_names(tree)) == []


async def test_discord_help_is_built_from_the_tree() -> None:
    tree = await discord_tree()
    cog = HelpFromTree(tree)
    assert cog.entries() == commands.help_entries("discord") == discord_help.ENTRIES
    assert foreign_lines("discord", commands.COMMANDS) == []
    # a command the tree lacks leaves /help
    tree.remove_command("stats")
    assert "/stats — your answers, accuracy and streaks" not in \
        [e.text for e in cog.entries()]


async def test_discord_commands_hidden_from_members_are_declared_for_admins() -> None:
    """`default_permissions` hides a command from members; its declaration says admins use
    it (all of it, or a line of it, as /daily's set and off)."""
    tree = await discord_tree()
    by_name = {c.name_on("discord"): c for c in commands.COMMANDS}
    hidden = [c.name for c in tree.get_commands()
              if c.default_permissions is not None and c.default_permissions.manage_guild]
    assert {"analysis", "reports", "dashboard", "daily"} <= set(hidden)
    assert [name for name in hidden
            if not any(e.admin for e in by_name[name].entries("discord"))] == []


class HelpFromTree(discord_help.HelpCog):
    def __init__(self, tree: app_commands.CommandTree[Any]) -> None:
        super().__init__(cast(QuizService, SimpleNamespace()))
        self.tree = tree


# the checks themselves -------------------------------------------------------------------

def test_the_checks_catch_planted_mistakes() -> None:
    assert disagreement("discord", ["quiz", "stats"], ["quiz", "streak"]) == [
        "discord: /streak registered, not declared", "discord: /stats declared, not registered"]
    wrong = Command("stats", telegram=On(Line("/statistics — yours")),
                    discord=On(Line("/stats — yours")))
    assert foreign_lines("telegram", [wrong]) == ["/statistics — yours"]
    assert foreign_lines("discord", [wrong]) == []


def test_declarations_resolve_where_and_who_and_the_menu_order() -> None:
    host = commands.declared("host")
    assert (host.where, host.admin) == (Where.SHARED, True)
    assert [(e.where, e.admin) for e in host.entries("telegram")] == [(Where.SHARED, True)]
    quiz = commands.declared("quiz").entries("telegram")
    assert [(e.where, e.admin) for e in quiz] == \
        [(Where.ANYWHERE, False), (Where.PRIVATE, False), (Where.SHARED, False)]
    assert commands.names("telegram").count("review") == 1  # /review and /review export
    assert commands.declared("review-export").name_on("discord") == "review-export"
    planted = (Command("a", telegram=On(Line("/a — one")), menu=Menu(2, "second")),
               Command("b", telegram=On(), discord=On(), menu=Menu(1, "first")),
               Command("c", discord=On(Line("/c — three"))))
    assert commands.menu(planted) == (("b", "first"), ("a", "second"))
    assert commands.names("discord", planted) == ["b", "c"]
    assert [e.text for e in commands.help_entries("telegram", declarations=planted)] == \
        ["/a — one"]
    assert commands.help_entries("discord", {"b"}, planted) == ()

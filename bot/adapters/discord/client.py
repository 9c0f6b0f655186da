"""The discord.py bot: the cogs, the answer buttons and the command translator.

A fresh bot per start (discord.py's close() leaves a client unusable). Everything a handler
needs is given to its cog or to the button class when the bot is built (`build_bot`), so no
handler reaches for state through `interaction.client`.
"""

from __future__ import annotations

from collections.abc import Sequence

import discord
from discord.ext import commands

from bot.adapters.discord.buttons import AnswerButton, AnswerClicks, answer_buttons
from bot.adapters.discord.daily import DailyCog
from bot.adapters.discord.localize import CatalogTranslator
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.quiz import QuizCog
from bot.adapters.discord.replies import ErrorReplies
from bot.core.service import QuizService


class QuizBot(commands.Bot):
    def __init__(
        self, cogs: Sequence[commands.Cog], buttons: type[AnswerButton], *,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        # Slash commands and buttons need no privileged intents; `guilds` gives channel names.
        # No prefix commands: only a mention could trigger one, and none are defined.
        intents = discord.Intents.none()
        intents.guilds = True
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=intents,
            guild_ready_timeout=guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),  # names in text never ping anyone
        )
        self.cogs_to_add = list(cogs)
        self.buttons = buttons

    async def setup_hook(self) -> None:
        for cog in self.cogs_to_add:
            await self.add_cog(cog)
        # buttons of every message, old or new, dispatch here by custom_id
        self.add_dynamic_items(self.buttons)
        # command descriptions in every language Discord and our catalogs share (before sync)
        await self.tree.set_translator(CatalogTranslator())


def build_bot(service: QuizService, publisher: ChannelPublisher, *,
              guild_ready_timeout: float = 2.0) -> QuizBot:
    """A new bot wired to the service; the publisher posts through it from now on."""
    errors = ErrorReplies(service)
    buttons = answer_buttons(AnswerClicks(service, publisher, errors))
    bot = QuizBot(
        [QuizCog(service, publisher, errors), DailyCog(service, errors)], buttons,
        guild_ready_timeout=guild_ready_timeout,
    )
    publisher.client, publisher.buttons = bot, buttons
    return bot

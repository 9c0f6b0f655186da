"""The discord.py Client: command tree, answer buttons, and what handlers reach through it.

Handlers get the service, settings and publisher from `interaction.client`, so a fresh client
(one per start, as discord.py requires after close()) carries everything they need.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from bot.adapters.discord import commands, daily
from bot.adapters.discord.buttons import AnswerButton
from bot.adapters.discord.localize import CatalogTranslator
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.replies import apologize, reply_error
from bot.core.models import QuizError
from bot.core.service import QuizService
from bot.settings import Settings

log = logging.getLogger(__name__)


class QuizTree(app_commands.CommandTree["QuizClient"]):
    """Explains the user's mistakes (QuizError); logs anything else and apologises."""

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        client: QuizClient = interaction.client  # type: ignore[assignment]
        original = error.original if isinstance(error, app_commands.CommandInvokeError) \
            else error
        try:
            if isinstance(original, QuizError):
                await reply_error(interaction, client.service, original)
                return
        except discord.HTTPException as exc:
            log.warning("could not explain an error to interaction %s: %s", interaction.id, exc)
            return
        command = interaction.command.qualified_name if interaction.command else "?"
        log.error(
            "/%s failed: user %s channel %s guild %s options %s",
            command, interaction.user.id, interaction.channel_id, interaction.guild_id,
            interaction.namespace.__dict__, exc_info=original,
        )
        await apologize(interaction, client.service)


class QuizClient(discord.Client):
    def __init__(
        self,
        service: QuizService,
        settings: Settings,
        publisher: ChannelPublisher,
        *,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        # Slash commands and buttons need no privileged intents; `guilds` gives channel names.
        intents = discord.Intents.none()
        intents.guilds = True
        super().__init__(
            intents=intents,
            guild_ready_timeout=guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),  # names in text never ping anyone
        )
        self.service = service
        self.settings = settings
        self.publisher = publisher
        self.tree = QuizTree(self)
        commands.register(self.tree)
        daily.register(self.tree)

    async def setup_hook(self) -> None:
        # buttons of every message, old or new, dispatch here by custom_id
        self.add_dynamic_items(AnswerButton)
        # command descriptions in every language Discord and our catalogs share (before sync)
        await self.tree.set_translator(CatalogTranslator())

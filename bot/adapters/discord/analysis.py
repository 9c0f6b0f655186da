"""/analysis [quiz]: the channel's item analysis for those who may manage the server, as
ephemeral text and a chart attached to a last ephemeral message.

The text comes in as many messages as it needs (an embed's 4096 characters each). The chart
is drawn by the core off the event loop; a slow drawing is covered by the Responder, which
defers before Discord's 3 seconds run out. Anyone else is refused by the core in their
language (the tree's `on_error`, client.py).
"""

from __future__ import annotations

import io
import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.embeds import plain
from bot.adapters.discord.identity import can_manage, chat_of
from bot.adapters.discord.quiz import quiz_choices
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.content.limits import DC_EMBED_DESCRIPTION
from bot.core.analysis_text import analysis_blocks, chunks
from bot.core.service import QuizService
from bot.i18n import _

log = logging.getLogger(__name__)

CHART_FILE = "analysis.png"


class AnalysisCog(commands.Cog):
    def __init__(self, service: QuizService) -> None:
        self.service = service

    @app_commands.command(
        name="analysis",
        description=_("Which questions work: item analysis with a chart (admins)"))
    @app_commands.describe(quiz=_("A quiz (empty: every quiz answered here)"))
    @app_commands.default_permissions(manage_guild=True)  # hidden from others; checked anyway
    async def analysis_command(
        self, interaction: discord.Interaction, quiz: str | None = None
    ) -> None:
        chat = chat_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            analysis = await self.service.item_analysis.for_chat(
                chat, quiz, allowed=can_manage(interaction), locale=t.locale
            )
            for text in chunks(analysis_blocks(analysis, t), DC_EMBED_DESCRIPTION,
                               lambda s: len(plain(s))):
                await responder.send(Reply.text(text))
            if analysis.chart is not None:
                chart = discord.File(io.BytesIO(analysis.chart), filename=CHART_FILE)
                try:
                    await interaction.followup.send(file=chart, ephemeral=True)
                except discord.HTTPException as exc:  # the text was shown already
                    log.warning("the item-analysis chart for %s was refused: %s",
                                chat.key, exc)

    @analysis_command.autocomplete("quiz")
    async def quiz_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await quiz_choices(self.service, interaction, current)

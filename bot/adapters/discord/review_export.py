"""/review-export on Discord: the person's due and missed cards as an Anki deck, attached to
an ephemeral reply (a plain message in their DM). Discord cannot give /review both its own
action and a subcommand, so the export is a command of its own; Telegram's is `/review
export`.
"""

from __future__ import annotations

import io

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.identity import chat_of, person_of
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.core.review_export import FILE_NAME, deck_caption, nothing_to_export_text
from bot.core.service import QuizService
from bot.i18n import _


class ReviewExportCog(commands.Cog):
    def __init__(self, service: QuizService) -> None:
        self.service = service

    @app_commands.command(name="review-export",
                          description=_("Your due and missed questions as an Anki deck"))
    async def review_export_command(self, interaction: discord.Interaction) -> None:
        person, chat = person_of(interaction), chat_of(interaction)
        async with Responder(interaction, ephemeral=not chat.is_private) as responder:
            t = await reader(self.service, interaction)
            deck = await self.service.review_deck.apkg(person, t.locale)
            if deck is None:
                await responder.send(Reply.text(nothing_to_export_text(t)))
                return
            file = discord.File(io.BytesIO(deck.content), filename=FILE_NAME)
            await responder.send(Reply(content=deck_caption(t, deck.cards), file=file))

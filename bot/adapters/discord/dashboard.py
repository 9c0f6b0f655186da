"""/dashboard on Discord (bot/core/dashboard.py decides): members with Manage Server get a
signed link to the channel's web dashboard, ephemeral (only they see it); `/dashboard
revoke:True` ends every link and session of the channel. Anyone else is refused by the core in
their language (the tree's `on_error`, client.py)."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.identity import can_manage, chat_of
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.core.dashboard import link_text, revoked_text
from bot.core.service import QuizService
from bot.i18n import _


class DashboardCog(commands.Cog):
    def __init__(self, service: QuizService) -> None:
        self.service = service

    @app_commands.command(name="dashboard",
                          description=_("A private link to this channel's web dashboard "
                                        "(admins)"))
    @app_commands.describe(revoke=_("End every dashboard link and session of this channel"))
    @app_commands.default_permissions(manage_guild=True)  # hidden from others; checked anyway
    async def dashboard_command(self, interaction: discord.Interaction,
                                revoke: bool = False) -> None:
        chat, allowed = chat_of(interaction), can_manage(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            if revoke:
                await self.service.dashboard.revoke(chat, allowed=allowed)
                await responder.send(Reply.text(revoked_text(t)))
                return
            link = await self.service.dashboard.link(chat, allowed=allowed, locale=t.locale)
            await responder.send(Reply.text(link_text(link, t)))

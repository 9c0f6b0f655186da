"""/mydata on Discord (bot/core/privacy.py decides): the person's data as an attachment of an
ephemeral reply (or of a message in their DM), or, with `delete: True`, a confirmation
button. The button is a DynamicItem whose custom_id (`pd:<expiry>.<signature>`) is signed
with the bot token, so any process or shard accepts it after a restart and nobody else's
click (or a made-up custom_id) deletes anything."""

from __future__ import annotations

import io
import re
from typing import Any, ClassVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.identity import PREFIX, chat_of, person_of
from bot.adapters.discord.intake import Intake
from bot.adapters.discord.replies import ErrorReplies, Reply, Responder, reader
from bot.core import privacy
from bot.core.models import Chat
from bot.core.service import QuizService
from bot.i18n import _

# wide enough that a changed custom_id still reaches the callback and is refused politely
TEMPLATE = r"pd:(?P<token>[0-9a-zA-Z.]{1,90})"


def secret_of(interaction: discord.Interaction) -> str:
    """What every process of this bot shares and nobody else knows: its token."""
    token = interaction.client.http.token
    if not token:
        raise RuntimeError("the bot is not logged in")
    return token


def dm_chats(interaction: discord.Interaction) -> list[Chat]:
    """The person's DM with the bot, as far as discord.py knows it: where they pressed, or
    the DM channel it has open with them."""
    chats = [chat_of(interaction)]
    if (dm := interaction.user.dm_channel) is not None:
        chats.append(Chat(f"{PREFIX}{dm.id}", "", is_private=True))
    return chats


class ConfirmDelete(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    """The confirmation button; `cog` is set on the subclass each bot registers."""

    cog: ClassVar[PrivacyCog | None] = None

    def __init__(self, token: str, label: str = "") -> None:
        super().__init__(discord.ui.Button(
            label=label or "…", style=discord.ButtonStyle.danger, custom_id=f"pd:{token}"))
        self.token = token

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
        match: re.Match[str], /,
    ) -> ConfirmDelete:
        return cls(match["token"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.cog is not None and self.cog.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.cog is not None:
            await self.cog.confirmed(interaction, self.token)


class PrivacyCog(commands.Cog):
    def __init__(self, service: QuizService, errors: ErrorReplies, intake: Intake) -> None:
        self.service = service
        self.errors = errors
        self.intake = intake

        class Bound(ConfirmDelete, template=TEMPLATE):
            pass

        Bound.cog = self
        self.confirm_button = Bound
        self.dynamic_items: tuple[type[ConfirmDelete], ...] = (Bound,)

    @app_commands.command(name="mydata",
                          description=_("What the bot stores about you, as a file"))
    @app_commands.describe(delete=_("True: delete everything the bot stores about you"))
    async def mydata_command(self, interaction: discord.Interaction,
                             delete: bool = False) -> None:
        person, chat = person_of(interaction), chat_of(interaction)
        # ephemeral in a channel: seen by the person alone, as in their DM
        async with Responder(interaction, ephemeral=not chat.is_private) as responder:
            t = await reader(self.service, interaction)
            if delete:
                token = self.service.delete_confirmation(
                    person, chat, secret_of(interaction), replies_privately=True)
                view = discord.ui.View(timeout=None)
                view.add_item(self.confirm_button(token, privacy.confirm_button(t)))
                await responder.send(Reply(content=privacy.confirm_text(t), view=view))
                return
            data = await self.service.my_data(person, chat, replies_privately=True)
            file = discord.File(io.BytesIO(data.content), filename=data.file_name)
            await responder.send(Reply(content=privacy.export_caption(t), file=file))

    async def confirmed(self, interaction: discord.Interaction, token: str) -> None:
        person = person_of(interaction)
        try:
            t = await reader(self.service, interaction)  # before their language is deleted
            deleted = await self.service.delete_my_data(
                person, token, secret_of(interaction), dm_chats(interaction))
        except Exception as exc:
            await self.errors.failed(interaction, exc, "the /mydata delete button")
            return
        async with Responder(interaction, ephemeral=True) as responder:
            await responder.send(Reply.text(privacy.deleted_text(deleted, t)))

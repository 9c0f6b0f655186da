"""Live sessions and peer rounds on Telegram: /host, /peer, /next, /pause, /skip, /end, the
Join button and the answer buttons of a live question. The rules are the core's (live.py,
peer.py); this shows them.

- A live question is a message with one button per option ("la:<post>:<option>"), not a quiz
  poll: a poll shows its counts to whoever voted, and a peer round's first vote must stay
  hidden. A press is answered privately (the button's small notice), so nobody sees others'
  choices before the question closes.
- The countdown is the question message edited by the scheduler's tick at most once per
  COUNTDOWN_EVERY: Telegram allows about 20 messages a minute in a group, and edits count,
  so a 60 s question costs 12 edits, one more to close it (no buttons, no countdown), and
  leaves room for the reveal and the podium. The lobby's edits are paced alike.
- Each person's rank goes to their private chat with the bot, where they have started it;
  Telegram refuses the others (a bot cannot write first), and they are not told.
- A peer round's discussion opens in a new forum topic where the chat is a forum and the bot
  may create topics (createForumTopic); Telegram refuses it anywhere else, and the
  discussion stays in the chat.
"""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import timedelta
from weakref import WeakKeyDictionary

import telegram
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.adapters.telegram.context import BotData, Context
from bot.adapters.telegram.handlers import Command, command, handles, press
from bot.adapters.telegram.identity import (
    PREFIX,
    chat_id_of,
    chat_of,
    message_ref,
    parse_message_ref,
    person_of,
)
from bot.adapters.telegram.text import fit
from bot.content.limits import TG_ALERT
from bot.core import live_text
from bot.core.live import (
    Asked,
    Closed,
    Countdown,
    EditPacer,
    Lobby,
    Paused,
    Podium,
    Revealed,
)
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.peer import PeerResult, Revoting, Split
from bot.core.render import letter
from bot.i18n import Translator, translator

log = logging.getLogger(__name__)

COUNTDOWN_EVERY = timedelta(seconds=5)
ANSWER = re.compile(r"la:(\d{1,18}):(\d{1,2})")
JOIN = re.compile(r"lj(?::(\d{1,2}))?")  # Join, or a chosen team's (0-based)
PRESSES = r"^(lj(:\d{1,2})?|la:\d{1,18}:\d{1,2})$"
NO_BUTTONS = InlineKeyboardMarkup([])  # an edit that closes a message drops its keyboard


# the joined count on the lobby, paced per application (two bots in one process, as in the
# tests, never share it)
_LOBBY_EDITS: WeakKeyDictionary[BotData, EditPacer] = WeakKeyDictionary()


def lobby_edits(data: BotData) -> EditPacer:
    return _LOBBY_EDITS.setdefault(data, EditPacer(COUNTDOWN_EVERY.total_seconds()))


def join_keyboard(lobby: Lobby, t: Translator) -> InlineKeyboardMarkup:
    """Join, or one button per team where people choose theirs."""
    if not lobby.session.choose:
        return InlineKeyboardMarkup([[InlineKeyboardButton(t.gettext("Join"),
                                                           callback_data="lj")]])
    buttons = [InlineKeyboardButton(live_text.team_label(k, t), callback_data=f"lj:{k}")
               for k in range(lobby.session.teams)]
    return InlineKeyboardMarkup([buttons[i:i + 3] for i in range(0, len(buttons), 3)])


def answer_keyboard(question: ShownQuestion) -> InlineKeyboardMarkup:
    buttons = [InlineKeyboardButton(letter(i), callback_data=f"la:{question.post_id}:{i}")
               for i in range(len(question.options))]
    return InlineKeyboardMarkup([buttons[i:i + 4] for i in range(0, len(buttons), 4)])


# commands ------------------------------------------------------------------------------------
def host_words(
    args: list[str],
) -> tuple[str | None, str | None, str, bool, str | None, bool]:
    """/host [quiz or topic] [N] [teams K [choose]] [speed] [Ss]: (selector, count, teams,
    speed, seconds, choose); the core checks the values."""
    words, count, teams, speed, seconds = list(args), None, "0", False, None
    choose = "choose" in (w.lower() for w in words)
    words = [w for w in words if w.lower() != "choose"]
    timed = [w for w in words if re.fullmatch(r"\d+s", w.lower())]
    if timed:
        seconds = timed[-1][:-1]
        words = [w for w in words if w not in timed]
    if "speed" in (w.lower() for w in words):
        speed = True
        words = [w for w in words if w.lower() != "speed"]
    lowered = [w.lower() for w in words]
    if "teams" in lowered:
        at = lowered.index("teams")
        teams = words[at + 1] if at + 1 < len(words) else ""
        words = words[:at] + words[at + 2:]
    if words and words[-1].lstrip("+-").isdigit():
        count, words = words[-1], words[:-1]
    return " ".join(words) or None, count, teams, speed, seconds, choose


@handles("host")
async def host(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    selector, count, teams, speed, seconds, choose = host_words(cmd.args)
    lobby = await cmd.data.service.host(
        cmd.chat, cmd.person, selector, count or 5, allowed=await cmd.may_manage(),
        teams=teams, speed=speed, choose=choose, **({"seconds": seconds} if seconds else {}))
    await show_lobby(cmd, lobby)


@handles("peer")
async def peer(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    shown = await cmd.data.service.peer_round(cmd.chat, cmd.person, " ".join(cmd.args) or None,
                                              allowed=await cmd.may_manage())
    if isinstance(shown, Lobby):
        await show_lobby(cmd, shown)
    else:
        await show(cmd.data, shown)


@handles("next")
async def next_step(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    if (event := await cmd.data.service.live_next(cmd.chat, cmd.person)) is not None:
        await show(cmd.data, event)


@handles("pause")
async def pause(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    await show(cmd.data, await cmd.data.service.live.pause(cmd.chat.key, cmd.person))


@handles("skip")
async def skip(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    await show(cmd.data, await cmd.data.service.live.skip(cmd.chat.key, cmd.person))


@handles("end")
async def end(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    await show(cmd.data, await cmd.data.service.live.end(cmd.chat.key, cmd.person))


async def show_lobby(cmd: Command, lobby: Lobby) -> None:
    t = translator(lobby.session.locale)
    if lobby.took_over:
        await cmd.reply(live_text.took_over_text(t))
        return
    sent = await cmd.message.reply_text(fit(live_text.lobby_text(lobby, t)),
                                        reply_markup=join_keyboard(lobby, t))
    await cmd.data.service.live.lobby_shown(lobby.session.id,
                                            message_ref(sent.chat_id, sent.message_id))


# presses -------------------------------------------------------------------------------------
async def pressed(update: Update, context: Context) -> None:
    """Join, or an answer to the open live question (a peer round's vote)."""
    if (query := press(update, context)) is None or query.message is None:
        return
    data, person = context.bot_data, person_of(query.from_user)
    service = data.service
    if (join := JOIN.fullmatch(query.data or "")) is not None:
        chat = chat_of(query.message.chat)
        lobby = await service.live.join(chat.key, person, join.group(1))
        mine = translator(await service.locales.for_person(person, chat))
        await query.answer(fit(live_text.joined_text(lobby, mine), TG_ALERT))
        t = translator(lobby.session.locale)
        if lobby_edits(data).due(query.message.chat.id, asyncio.get_running_loop().time()):
            try:  # who joined, on the lobby message
                lobby = await service.live.lobby(chat_of(query.message.chat).key)
                await query.edit_message_text(fit(live_text.lobby_text(lobby, t)),
                                              reply_markup=join_keyboard(lobby, t))
            except BadRequest as exc:  # "message is not modified": a second press
                log.debug("lobby not edited: %s", exc)
        return
    match = ANSWER.fullmatch(query.data or "")
    if match is None:
        return
    result = await service.live_answer(int(match.group(1)), person, int(match.group(2)))
    t = translator(await service.locales.for_person(person, chat_of(query.message.chat)))
    notice = {"accepted": t.gettext("Your answer is in."),
              "duplicate": t.gettext("Your first answer stands."),
              "closed": t.gettext("This question is closed.")}[result.status]
    await alert_quietly(query, notice)
    if result.closed is not None:
        await show(data, result.closed)


async def alert_quietly(query: telegram.CallbackQuery, text: str) -> None:
    try:
        await query.answer(fit(text, TG_ALERT))
    except TelegramError as exc:
        log.info("could not answer press %s: %s", query.id, exc)


# what the chat sees ----------------------------------------------------------------------------
async def show(data: BotData, event: object) -> None:
    """Any event of a live session or a peer round, in its chat: a step of the session
    through the durable deliveries (once, whoever tries it: live.py `show`), a pause as a
    plain reply."""
    session = getattr(event, "session", None)
    if session is None:
        return
    if isinstance(event, Paused):
        t = translator(session.locale)
        await data.poster.bot.send_message(chat_id_of(session.chat_key),
                                           fit(live_text.paused_text(event, t)))
        return
    await data.service.live.show(event, lambda closed: send_step(data, event, closed))


async def send_step(data: BotData, event: object, closed: Closed | None) -> None:
    session = getattr(event, "session", None)
    if session is None:
        return
    t = translator(session.locale)
    chat_id = chat_id_of(session.chat_key)
    bot = data.poster.bot
    if closed is not None:
        await close_message(data, closed, t)
    if isinstance(event, Podium | PeerResult) and session.lobby_ref:
        await end_lobby(data, session.lobby_ref, event, t)
    if isinstance(event, Asked | Revoting):
        text = (live_text.question_text(event.question, event.session.seconds, t)
                if isinstance(event, Asked) else live_text.revote_text(event, t) + "\n\n"
                + live_text.question_text(event.question, event.session.seconds, t))
        sent = await bot.send_message(chat_id, fit(text),
                                      reply_markup=answer_keyboard(event.question))
        await data.service.questions.bind(event.question.post_id,
                                          message_ref(chat_id, sent.message_id))
    elif isinstance(event, Revealed):
        await bot.send_message(chat_id, fit(live_text.revealed_text(event, t)))
    elif isinstance(event, Split):
        place = await open_discussion(data, chat_id, event, t)
        await bot.send_message(chat_id, fit(live_text.split_text(event, t, place)))
    elif isinstance(event, PeerResult):
        await bot.send_message(chat_id, fit(live_text.peer_result_text(event, t)))
    elif isinstance(event, Podium):
        await bot.send_message(chat_id, fit(live_text.podium_text(event, t)))
        await tell_ranks(data, event)


def newest(refs: tuple[str, ...]) -> tuple[int, int] | None:
    """The newest of a post's messages (a peer round's revote is the second of its post)."""
    found = [where for ref in refs if (where := parse_message_ref(ref)) is not None]
    return max(found, key=lambda where: where[1], default=None)


async def close_message(data: BotData, closed: Closed, t: Translator) -> None:
    """The closed question's message: its buttons and its countdown gone."""
    if (where := newest(closed.refs)) is None:
        return
    try:
        await data.poster.bot.edit_message_text(
            fit(live_text.closed_question_text(closed.question, t)), chat_id=where[0],
            message_id=where[1], reply_markup=NO_BUTTONS)
    except BadRequest as exc:  # not modified, or deleted by an admin
        log.debug("closed question not edited: %s", exc)


async def end_lobby(data: BotData, ref: str, event: Podium | PeerResult, t: Translator) -> None:
    """The lobby says the session ended, with who played: no Join any more."""
    if (where := parse_message_ref(ref)) is None:
        return
    text = live_text.lobby_over_text(event, t) if isinstance(event, Podium) else None
    if text is None:
        return
    try:
        await data.poster.bot.edit_message_text(fit(text), chat_id=where[0],
                                                message_id=where[1], reply_markup=NO_BUTTONS)
    except BadRequest as exc:
        log.debug("lobby not edited: %s", exc)


async def open_discussion(data: BotData, chat_id: int, split: Split, t: Translator) -> str | None:
    """A forum topic for the discussion, opened by its prompt: the topic's name; None where
    the chat is no forum or the bot may not create topics (the discussion is in the chat)."""
    bot = data.poster.bot
    try:
        topic = await bot.create_forum_topic(chat_id, live_text.discussion_name(split, t))
        await bot.send_message(chat_id, fit(live_text.discussion_text(split, t)),
                               message_thread_id=topic.message_thread_id)
    except (BadRequest, Forbidden) as exc:
        log.info("the discussion in %s stays in the chat: %s", chat_id, exc)
        return None
    except TelegramError as exc:
        # the Bot API down or slow (retried already): the round goes on in the chat rather
        # than stopping in `discuss` with nothing said; a topic opened without its prompt
        # is not pointed to
        log.warning("the discussion in %s stays in the chat: its topic failed (%s)",
                    chat_id, exc)
        return None
    return topic.name


async def tell_ranks(data: BotData, podium: Podium) -> None:
    """Each person's place in their private chat with the bot, where Telegram lets it."""
    chat = Chat(podium.session.chat_key)
    for standing in podium.standings:
        # their /lang, else their platform's language when they joined, else the chat's
        t = translator(await data.service.locales.for_person(
            Person(standing.person_key, "", standing.locale), chat))
        try:
            await data.poster.text(int(standing.person_key.removeprefix(PREFIX)),
                                   live_text.rank_text(standing, len(podium.standings), t))
        except (Forbidden, BadRequest) as exc:  # never started the bot, or blocked it
            log.info("rank not sent to %s: %s", standing.person_key, exc)


async def edit_countdown(data: BotData, countdown: Countdown) -> None:
    """The countdown line of the question message (at most once per COUNTDOWN_EVERY)."""
    if countdown.question is None:
        return
    t = translator(countdown.session.locale)
    if (where := newest(countdown.refs)) is None:  # a revote's, not the first vote's
        return
    try:
        await data.poster.bot.edit_message_text(
            fit(live_text.countdown_text(countdown, countdown.question, t)),
            chat_id=where[0], message_id=where[1],
            reply_markup=answer_keyboard(countdown.question))
    except BadRequest as exc:  # not modified, or deleted by an admin
        log.debug("countdown not edited: %s", exc)


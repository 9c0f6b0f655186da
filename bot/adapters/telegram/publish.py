"""Sending what the core produced into Telegram chats: questions (quiz polls or button
messages), summaries and plain replies, and binding poll and message references to posts.

A group upgraded to a supergroup answers a send with ChatMigrated: its data moves to the new
chat id (the core's migrate_chat) and the message is sent there.

A question sent with no reply that may still have reached Telegram (a timeout after sending)
is not sent again: it is remembered (unconfirmed.py) and bound when it shows up, so every
question a chat sees counts its votes. A summary, a round's end or a reminder sent with no
reply counts as sent: Telegram shows it once, late, or not at all, never twice; a summary's
chart and its text are each stored as started before they go (core/delivery.py), so a retry
skips what went out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from datetime import timedelta

import telegram
from telegram import Bot, InlineKeyboardMarkup, ReplyParameters
from telegram.constants import ChatType
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from bot.adapters.telegram.card_caption import card_caption
from bot.adapters.telegram.explanation_media import ExplanationPictures
from bot.adapters.telegram.identity import (
    PREFIX,
    card_ref,
    chat_id_of,
    message_ref,
    parse_card_ref,
    parse_message_ref,
    poll_ref,
)
from bot.adapters.telegram.keyboards import (
    answer_keyboard,
    details_keyboard,
    flag_keyboard,
    kind_keyboard,
)
from bot.adapters.telegram.text import fit, poll_explanation
from bot.adapters.telegram.unconfirmed import Unconfirmed, UnconfirmedSends, may_have_arrived
from bot.content.items import Kind
from bot.content.limits import TG_CAPTION, TG_MESSAGE, TG_OPTION, TG_QUESTION, tg_len
from bot.core import render
from bot.core.models import CHART_STEP, TEXT_STEP, PostSummary, ShownQuestion
from bot.core.ports import ChatGone, TryLater
from bot.core.service import QuizService
from bot.counted_log import CountedLog
from bot.i18n import translator

log = logging.getLogger(__name__)

# sendPoll open_period bounds (Bot API 10.0)
MIN_OPEN_PERIOD = 5
MAX_OPEN_PERIOD = 2_628_000
TG_POLL_DESCRIPTION = 1024  # sendPoll's description (Bot API 10.0)
CHOICE_KINDS = (Kind.CHOICE, Kind.TRUEFALSE)  # the lettered answer buttons
POLL_KINDS = (*CHOICE_KINDS, Kind.MULTI)  # what a quiz poll can ask
CHAT_TYPES_KEPT = 4096  # chats whose type is remembered (oldest forgotten first)
BOUND_POLLS_KEPT = 4096  # polls known to be bound (a binding never changes)
# Seconds an answer on a poll or message bound to nothing waits for another process's bind
# (webhooks): it answers a vote cast the moment its poll appeared, before the bind committed.
BIND_RACE = 1.0
SUMMARY_CHART = "answers.png"
CARD = "question.png"


def with_text(base: str, extra: str, entities: list[telegram.MessageEntity],
              limit: int) -> tuple[str, list[telegram.MessageEntity]]:
    """`base`, then `extra` (a card's text) and its entities moved along, within `limit`
    UTF-16 units; a text too long for both is cut and keeps no entities."""
    if not extra:
        return fit(base, limit) if base else "", []
    head = base + "\n\n" if base else ""
    if tg_len(head + extra) > limit:
        return fit(head + extra, limit), []
    shift = tg_len(head)
    return head + extra, [telegram.MessageEntity(e.type, e.offset + shift, e.length,
                                                 language=e.language) for e in entities]


def chat_is_gone(exc: TelegramError) -> bool:
    """The bot can never post in that chat again: removed or blocked, or the chat deleted."""
    return isinstance(exc, Forbidden) or (
        isinstance(exc, BadRequest) and "chat not found" in exc.message.lower()
    )


@contextlib.contextmanager
def platform_errors() -> Iterator[None]:
    """Telegram's failures as the core's (ChatPort): ChatGone for good, TryLater for now.
    Anything else (a BadRequest) propagates as it is."""
    try:
        yield
    except TelegramError as exc:
        if chat_is_gone(exc):
            raise ChatGone(exc.message) from exc
        if isinstance(exc, RetryAfter):
            wait = exc.retry_after
            raise TryLater(exc.message, wait if isinstance(wait, timedelta)
                           else timedelta(seconds=wait)) from exc
        if isinstance(exc, NetworkError) and not isinstance(exc, BadRequest):
            raise TryLater(exc.message) from exc  # includes TimedOut
        raise


class Poster:
    """Sends into Telegram chats; the one place that knows polls, keyboards and references."""

    def __init__(self, bot: Bot, service: QuizService, *, shared: bool = False) -> None:
        """`shared`: other processes send questions too (webhooks behind a load balancer),
        so an answer may arrive here before the sender's bind."""
        self.bot = bot
        self.service = service
        self.shared = shared
        self._chat_types: OrderedDict[int, str] = OrderedDict()
        self._bound_polls: OrderedDict[str, None] = OrderedDict()
        self._kinds: OrderedDict[int, Kind] = OrderedDict()  # polls' posts' kinds
        # Questions sent but maybe not yet bound: an answer racing its own binding waits.
        self._in_flight = 0
        self._all_bound = asyncio.Event()
        self._all_bound.set()
        self.unconfirmed = UnconfirmedSends()
        self.pictures = ExplanationPictures()  # explanation pictures' file_ids
        self._storing: set[asyncio.Task[None]] = set()  # chats' kinds being stored
        # a chat's kind not looked up or not stored: logged once a minute, counted meanwhile
        self._lookups = CountedLog(log, logging.WARNING)

    def remember(self, chat: telegram.Chat) -> None:
        """The chat's kind, seen in an update: kept here, and stored with the chat when it
        is new or changed (in the background: a handler does not wait for it), so no
        process has to look it up before a send."""
        if chat.id > 0 or self._chat_types.get(chat.id) == chat.type:
            return
        self._remember_type(chat.id, chat.type)
        task = asyncio.create_task(self._store_type(chat.id, chat.type))
        self._storing.add(task)
        task.add_done_callback(self._storing.discard)

    async def _store_type(self, chat_id: int, kind: str) -> None:
        try:
            await self.service.chat_seen_as(f"{PREFIX}{chat_id}", kind)
        except Exception as exc:  # learned again from the chat's next update
            self._lookups.event("store", "the kind of chat %s was not stored (%s)",
                                chat_id, exc)

    async def stored(self) -> None:
        """Until every kind learned so far is stored (a stop, tests)."""
        while self._storing:
            await asyncio.gather(*self._storing, return_exceptions=True)

    def _remember_type(self, chat_id: int, kind: str) -> None:
        self._chat_types[chat_id] = kind
        self._chat_types.move_to_end(chat_id)
        while len(self._chat_types) > CHAT_TYPES_KEPT:
            self._chat_types.popitem(last=False)

    async def uses_buttons(self, chat_id: int) -> bool:
        """Channels get buttons: a quiz poll there could not report who answered. The kind
        comes from updates already seen (here, or stored with the chat by any process);
        only a chat never seen is looked up, and a lookup that fails in any way (an error,
        a body the library cannot read) gives buttons: they work in every kind of chat,
        where a poll guessed for a channel would be refused and the question not posted."""
        if chat_id > 0:
            return False
        kind = self._chat_types.get(chat_id) or await self.service.chat_kind(f"{PREFIX}{chat_id}")
        if kind is None:
            try:
                kind = (await self.bot.get_chat(chat_id)).type
            except RetryAfter:
                raise  # over the rate: the question waits, as any send does
            except (TelegramError, TypeError, ValueError, KeyError) as exc:
                # PTB raises TypeError (or KeyError) for a body it cannot parse
                self._lookups.event("lookup", "could not look up chat %s (%s: %s); "
                                    "sending buttons", chat_id, type(exc).__name__, exc)
                return True
            self._remember_type(chat_id, kind)
            await self._store_type(chat_id, kind)
        else:
            self._remember_type(chat_id, kind)
        return kind == ChatType.CHANNEL

    # questions ---------------------------------------------------------------------------
    async def question(self, question: ShownQuestion, *, buttons: bool | None = None) -> None:
        """Send a question the core created and bind its references to the post. `buttons`
        None: a poll, except in a channel."""
        self._in_flight += 1
        self._all_bound.clear()
        try:
            try:
                await self._send_question(question, buttons)
            except ChatMigrated as exc:
                new_key = await self._migrated(question.chat_key, exc.new_chat_id)
                await self._send_question(replace(question, chat_key=new_key), buttons)
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._all_bound.set()

    async def post_for(self, ref: str, within: float = 2.0) -> int | None:
        """The post a poll or message is bound to. A quick answer can arrive between
        sendPoll's reply and the bind: then wait (a little) for the sends in progress, here
        or, when shared, in another process (looking again for BIND_RACE seconds)."""
        post_id = await self.service.questions.post_id_for(ref)
        if post_id is None and not self._all_bound.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_bound.wait(), within)
            post_id = await self.service.questions.post_id_for(ref)
        if post_id is None and self.shared:
            deadline = asyncio.get_running_loop().time() + BIND_RACE
            while post_id is None and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)
                post_id = await self.service.questions.post_id_for(ref)
        return post_id

    async def poll_is_bound(self, poll_id: str) -> bool:
        """Whether the poll is some post's (remembered once known: it stays so)."""
        if poll_id in self._bound_polls:
            return True
        if await self.post_for(poll_ref(poll_id)) is None:
            return False
        self._bound_polls[poll_id] = None
        while len(self._bound_polls) > BOUND_POLLS_KEPT:
            self._bound_polls.popitem(last=False)
        return True

    async def _send_card(self, chat_id: int, question: ShownQuestion) -> bool:
        """The question's card as a photo just before it, what it shows as its caption
        (card_caption.py): by its file_id once Telegram has it (bot/core/cards.py), else
        uploaded and its file_id kept. The photo is bound to
        the post (card_ref) so it is deleted when the question closes. A card refused, or
        sent with no reply, leaves the question as text (it is not sent again: it may be
        there); a chat that is gone, moved or over its rate limit stops the question too.
        Whether the photo went out (else the question carries the card's text itself)."""
        cards = self.service.cards
        card = await cards.card(question, "tg")
        caption, entities = card_caption(question, translator(question.locale))
        text, ents = caption or None, entities or None
        try:
            if card is not None and card.ref is not None:
                try:
                    sent = await self.bot.send_photo(chat_id, card.ref, caption=text,
                                                     caption_entities=ents)
                    await self.service.questions.bind(question.post_id,
                                                      card_ref(chat_id, sent.message_id))
                    return True
                except BadRequest as exc:  # a file_id Telegram no longer knows: upload again
                    log.info("card %s was refused by file id (%s); uploading it", card.key, exc)
                    card = await cards.card(question, "tg", upload=True)
            if card is None or card.png is None:
                return False
            message = await self.bot.send_photo(chat_id, card.png, filename=CARD, caption=text,
                                                 caption_entities=ents)
        except NetworkError as exc:  # BadRequest included
            log.warning("the card of question %s was not sent to %s (%s); text only",
                        question.question_id, chat_id, exc or type(exc).__name__)
            return False
        await self.service.questions.bind(question.post_id, card_ref(chat_id, message.message_id))
        if message.photo:
            await cards.uploaded(card, message.photo[-1].file_id)
        return True

    async def _send_question(self, question: ShownQuestion, buttons: bool | None) -> None:
        chat_id = chat_id_of(question.chat_key)
        await self.service.delivery.question_sending(question.post_id)
        if buttons is None:
            buttons = await self.uses_buttons(chat_id)
        if not buttons and chat_id > 0 and question.kind in POLL_KINDS \
                and await self._asks_confidence(question):
            buttons = True  # a poll shows the result at the vote: it cannot ask how sure first
        t = translator(question.locale)
        # the card's text goes with the question when its photo did not go out
        card_text = ("", []) if not question.has_card or await self._send_card(
            chat_id, question) else card_caption(question, t)
        if question.kind not in POLL_KINDS:
            buttons = True  # typed, or put in order: a message with its own buttons
        text = fit(render.question_text(question, t)) if buttons \
            else fit(self._poll_question(question), TG_QUESTION)
        options = () if buttons else tuple(fit(o, TG_OPTION) for o in question.options)
        # a prompt too long for the poll's question goes whole in its description
        long_prompt = question.prompt if not buttons \
            and tg_len(self._poll_question(question)) > TG_QUESTION else ""
        description, description_entities = with_text(long_prompt, *card_text,
                                                       TG_POLL_DESCRIPTION)
        try:
            if buttons:
                markup = answer_keyboard(question) if question.kind in CHOICE_KINDS \
                    else kind_keyboard(question, t)
                text, entities = with_text(text, *card_text, TG_MESSAGE)
                message = await self.bot.send_message(chat_id, text, reply_markup=markup,
                                                      entities=entities or None)
            else:
                correct = sorted(question.correct_set) if question.kind is Kind.MULTI \
                    else [question.correct]
                message = await self.pictures.send(question.explanation_image, lambda media: (
                    self.bot.send_poll(
                        chat_id,
                        text,
                        options,
                        type=telegram.Poll.QUIZ,
                        is_anonymous=False,  # otherwise no poll_answer says who answered
                        # PTB types the ids as Literal[0..11]; a question has at most 12
                        correct_option_ids=correct,  # type: ignore[arg-type]
                        allows_multiple_answers=question.kind is Kind.MULTI,
                        explanation=poll_explanation(question.explanation),
                        explanation_media=media,  # a picture that explains, if it has one
                        open_period=self._open_period(question),
                        reply_markup=flag_keyboard(question.question_id),
                        description=description or None,
                        description_entities=description_entities or None,
                    )))
        except NetworkError as exc:
            if not may_have_arrived(exc):
                raise
            # Sending it again could show it twice; bind it if it shows up (unconfirmed.py).
            self.unconfirmed.add(Unconfirmed(
                question.post_id, chat_id, text, options,
                UnconfirmedSends.until(self._seconds_open(question)),
            ))
            log.warning("no reply to the question of post %s sent to %s (%s); it may be "
                        "there, and is bound to its post when it shows up",
                        question.post_id, chat_id, exc or type(exc).__name__)
            return
        refs = [message_ref(chat_id, message.message_id)]
        if message.poll is not None:
            refs.append(poll_ref(message.poll.id))
            self._remember_kind(question.post_id, question.kind)
        await self.service.questions.bind(question.post_id, *refs)

    async def _asks_confidence(self, question: ShownQuestion) -> bool:
        """A private chat asking how sure (confidence.py) gets buttons, unless it asked for
        polls (the question's mode, or its /settings mode)."""
        if question.mode == "polls":
            return False
        settings = await self.service.chat_settings.get(question.chat_key)
        return settings.confidence and settings.mode != "polls"

    def _remember_kind(self, post_id: int, kind: Kind) -> None:
        self._kinds[post_id] = kind
        while len(self._kinds) > BOUND_POLLS_KEPT:
            self._kinds.popitem(last=False)

    async def kind_of(self, post_id: int) -> Kind | None:
        """A poll's question's kind (a vote on a multi is a set of picks), remembered."""
        if (kind := self._kinds.get(post_id)) is None:
            shown = await self.service.questions.show(post_id)
            if shown is None:
                return None
            kind = shown.kind
            self._remember_kind(post_id, kind)
        return kind

    async def bind_late_poll(self, poll: telegram.Poll) -> tuple[int, list[telegram.PollAnswer]]:
        """A poll Telegram reports that is bound to nothing: if it is a question whose send
        got no reply, bind it. Returns its post (0 if none) and the votes kept for it."""
        if not self.unconfirmed.awaiting_polls or self.unconfirmed.late_post(poll.id):
            return 0, []
        if await self.service.questions.post_id_for(poll_ref(poll.id)) is not None:
            return 0, []
        sent = self.unconfirmed.take_poll(poll)
        if sent is None:
            return 0, []
        await self.service.questions.bind(sent.post_id, poll_ref(poll.id))
        log.info("poll %s in %s showed up after all; bound to post %s",
                 poll.id, sent.chat_id, sent.post_id)
        return sent.post_id, self.unconfirmed.bound(poll.id, sent.post_id)

    async def bind_late_message(self, message: telegram.Message, post_id: int) -> int | None:
        """A pressed message of the bot's that is bound to nothing: if it is the question of
        `post_id` whose send got no reply, bind it."""
        if message.from_user is None or message.from_user.id != self.bot.id:
            return None
        sent = self.unconfirmed.take_message(message.chat.id, post_id, message.text)
        if sent is None:
            return None
        await self.service.questions.bind(post_id, message_ref(message.chat.id, message.message_id))
        log.info("message %s in %s showed up after all; bound to post %s",
                 message.message_id, message.chat.id, post_id)
        return post_id

    @staticmethod
    def _poll_question(question: ShownQuestion) -> str:
        return render.poll_question(question, translator(question.locale))

    def _seconds_open(self, question: ShownQuestion) -> float | None:
        if question.closes_at is None:
            return None
        return (question.closes_at - self.service.clock.now()).total_seconds()

    def _open_period(self, question: ShownQuestion) -> int | None:
        seconds = self._seconds_open(question)
        if seconds is None:
            return None
        return min(max(round(seconds), MIN_OPEN_PERIOD), MAX_OPEN_PERIOD)

    # summaries ---------------------------------------------------------------------------
    async def summary(self, summary: PostSummary) -> None:
        """Stop the question's poll (or remove its keyboard), then post the summary under it."""
        chat_id = chat_id_of(summary.chat_key)
        is_poll = any(ref.startswith("tg-poll:") for ref in summary.refs)
        anchor = None
        for ref in summary.refs:
            if (card := parse_card_ref(ref)) is not None and card[0] == chat_id:
                await self._delete_card(*card)
                continue
            parsed = parse_message_ref(ref)
            if parsed is None or parsed[0] != chat_id:
                continue
            anchor = max(anchor or 0, parsed[1])
            await self._retire(chat_id, parsed[1], is_poll)
        t = translator(summary.question.locale)
        text = fit(render.summary_text(summary, t))
        # the long explanation is a tap away, in the reader's private chat
        markup = details_keyboard(self.bot.username, summary.post_id, t) \
            if render.has_details(summary.question) else None
        try:
            await self._send_summary(
                summary, chat_id, text,
                ReplyParameters(anchor, allow_sending_without_reply=True) if anchor else None,
                markup,
            )
        except ChatMigrated as exc:
            new_key = await self._migrated(summary.chat_key, exc.new_chat_id)
            await self._send_summary(summary, chat_id_of(new_key), text, None, markup)

    async def _send_summary(self, summary: PostSummary, chat_id: int, text: str,
                            reply: ReplyParameters | None,
                            markup: InlineKeyboardMarkup | None = None) -> None:
        """The summary text; with a chart (/settings chart on), the photo with the text as
        its caption if it fits, else the photo and then the text. A photo Telegram refuses
        leaves the text alone. Each send is stored as started first (the core's delivery
        steps), so a retry, after the text failed or a crash, skips what went out or may
        have (summary.done)."""
        chart, done, post_id = summary.chart, summary.done, summary.post_id
        if chart is not None:
            caption = text if tg_len(text) <= TG_CAPTION else None
            if CHART_STEP not in done:
                try:
                    await self._step(post_id, chat_id, CHART_STEP, lambda: self.bot.send_photo(
                        chat_id, chart, caption=caption, reply_parameters=reply,
                        filename=SUMMARY_CHART, reply_markup=markup if caption else None))
                except BadRequest as exc:
                    log.warning("the chart of a summary in %s was refused (%s); text only",
                                chat_id, exc)
                    caption = None
            if caption is not None:
                return  # the photo's caption is the summary
        if TEXT_STEP in done:
            log.warning("the summary of post %s was being sent by a process that died; it "
                        "may be there, and is not sent again", post_id)
            return
        await self._step(post_id, chat_id, TEXT_STEP, lambda: self.bot.send_message(
            chat_id, text, reply_parameters=reply, reply_markup=markup))

    async def _step(self, post_id: int, chat_id: int, step: str,
                    send: Callable[[], Awaitable[object]]) -> None:
        """One send of a summary, stored as started before it goes: refused by Telegram, it
        is forgotten (sent again by the next try); with no reply, it may have arrived and
        counts as sent."""
        await self.service.delivery.step_started(post_id, step)
        try:
            await send()
        except TelegramError as exc:
            if isinstance(exc, NetworkError) and may_have_arrived(exc):
                self._maybe_sent(f"the {step} of the summary of post", post_id, chat_id, exc)
                return
            await self.service.delivery.step_refused(post_id, step)
            raise

    async def text_once(self, chat_id: int, text: str, *, what: str,
                        reply: ReplyParameters | None = None) -> None:
        """A message the core delivers once (a round's end, a reminder): a send that may
        have reached Telegram although its reply was lost (a timeout after sending) counts
        as sent, like a question's (sending it again could show it twice); Telegram shows
        it late or not at all, and the core does not offer it again."""
        try:
            await self.bot.send_message(chat_id, fit(text), reply_parameters=reply)
        except NetworkError as exc:
            if not may_have_arrived(exc):
                raise
            self._maybe_sent(what, None, chat_id, exc)

    @staticmethod
    def _maybe_sent(what: str, post_id: int | None, chat_id: int, exc: Exception) -> None:
        log.warning("no reply to %s%s sent to %s (%s); it may be there, and is not sent again",
                    what, "" if post_id is None else f" {post_id}", chat_id,
                    exc or type(exc).__name__)

    async def _retire(self, chat_id: int, message_id: int, is_poll: bool) -> None:
        try:
            if is_poll:
                await self.bot.stop_poll(chat_id, message_id)
            else:
                await self.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)
        except (BadRequest, ChatMigrated) as exc:
            # Already closed by its open_period, not modified, deleted, or the group moved:
            # nothing to retire.
            log.debug("retiring message %s in %s: %s", message_id, chat_id, exc)

    async def _delete_card(self, chat_id: int, message_id: int) -> None:
        """A closed or replaced question's card goes with it (its poll or buttons are
        retired; the summary says what was asked and what was right)."""
        try:
            await self.bot.delete_message(chat_id, message_id)
        except (BadRequest, ChatMigrated) as exc:
            # already deleted, older than Telegram lets a bot delete, or the group moved
            log.debug("deleting card %s in %s: %s", message_id, chat_id, exc)

    # anything else -----------------------------------------------------------------------
    async def text(self, chat_id: int, text: str) -> None:
        await self.bot.send_message(chat_id, fit(text))

    async def _migrated(self, old_key: str, new_chat_id: int) -> str:
        new_key = f"{PREFIX}{new_chat_id}"
        if await self.service.migrate_chat(old_key, new_key):
            log.info("chat %s became %s; its data moved along", old_key, new_key)
        return new_key

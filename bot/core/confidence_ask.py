"""Whether to ask "How sure are you?" before recording an answer (/settings confidence on):
the one rule both adapters follow, so neither keeps its own copy of the chat's setting.

Asked only when each of these holds, cheapest first:
- the chat's setting is on (remembered per chat: see below);
- the post is one a tap can wait on: open, not a live session's or a peer round's (a live
  question is answered against its countdown and its host; asking there would hold up the
  reveal), not someone else's private question;
- the answer is one a tap can carry: an option, several picks or an order, and the response
  fits the question (a forged or stale one is answered at once, so the core refuses it);
  a typed number or text only where the form it is typed in carries the question too
  (`in_form`), since after it is sent there is nothing left to tap;
- the person has not answered the post yet: the first answer is final, so asking again would
  only lead to "already answered" after a tap.
When it says no, the adapter records the answer at once and the core's answer says why it
was refused, if it was (closed, already answered, not yours, not an option).

The chat's setting is remembered for SETTING_SECONDS (a bounded LRU of SETTINGS_KEPT chats),
so a press in a chat that does not ask costs no read. A /settings change made in this process
is seen at once (ChatSettingsRules tells `changed`); one made in another process on the same
database (a second webhook worker) is seen within SETTING_SECONDS. That staleness is
harmless for the answer itself: a press asked after the setting went off still records the
answer (with the confidence tapped), and one not asked after it went on records it without
one; neither loses or doubles an answer, and 30 s is shorter than anyone takes to try the
setting they just changed in another chat window.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

from bot.content.items import Kind
from bot.core import grading
from bot.core.chat_settings import ChatSettings, ChatSettingsRules
from bot.core.clock import Clock
from bot.core.models import Person, Response, Typed
from bot.core.ports import AnswerStore, PostStore
from bot.core.questions import Questions, is_open

SETTING_SECONDS = 30.0  # how long a chat's setting is trusted before it is read again
SETTINGS_KEPT = 4096  # chats whose setting is remembered
NEVER_ASKED = frozenset({"live", "peer"})  # posts whose answers a tap must not hold up
TAPPED_KINDS = frozenset({Kind.CHOICE, Kind.TRUEFALSE, Kind.MULTI, Kind.ORDER})


class ConfidenceAskStorage(PostStore, AnswerStore, Protocol):
    """What ConfidenceAsk reads."""


class ConfidenceAsk:
    def __init__(self, questions: Questions, settings: ChatSettingsRules,
                 storage: ConfidenceAskStorage, clock: Clock) -> None:
        self.questions = questions
        self.settings = settings
        self.storage = storage
        self.clock = clock
        # chat key -> (asks, when read, on the service's clock)
        self._asks: OrderedDict[str, tuple[bool, float]] = OrderedDict()
        settings.listeners.append(self.changed)

    async def chat_asks(self, chat_key: str) -> bool:
        """Does the chat ask how sure with each answer (its /settings, remembered)?"""
        found = self._asks.get(chat_key)
        # a clock that went back (a corrected system time) reads again rather than trust it
        if found is not None and 0 <= self._now() - found[1] < SETTING_SECONDS:
            self._asks.move_to_end(chat_key)
            return found[0]
        asks = (await self.settings.get(chat_key)).confidence
        self._remember(chat_key, asks)
        return asks

    def changed(self, chat_key: str, settings: ChatSettings) -> None:
        """A /settings change made in this process: seen by the next press."""
        self._remember(chat_key, settings.confidence)

    async def asks(self, post_id: int, person: Person, response: Response | None = None,
                   *, chat_key: str | None = None, in_form: bool = False) -> bool:
        """Ask `person` how sure before recording `response` to the post? None: before the
        answer is given, for a form that would carry the question (`in_form`). `chat_key`:
        the chat pressed in, when the adapter knows it (saves reading the post first when
        the chat does not ask); the post's own chat otherwise."""
        if chat_key is not None and not await self.chat_asks(chat_key):
            return False
        post = await self.storage.get_post(post_id)
        if post is None or post.kind in NEVER_ASKED or not is_open(post, self.clock.now()) \
                or (post.owner_key is not None and post.owner_key != person.key):
            return False
        if chat_key is None and not await self.chat_asks(post.chat_key):
            return False
        question = self.questions.question_of(post)
        if question is None:
            return False
        if isinstance(response, Typed):  # sent whole: nothing is left to wait on
            return False
        if response is None:
            if not (in_form and question.kind.typed):
                return False
        elif question.kind not in TAPPED_KINDS or isinstance(
                grading.grade(grading.Key.of(question), post.order, response),
                grading.Unreadable):
            return False
        return await self.storage.answer_of(post_id, person.key) is None

    def _remember(self, chat_key: str, asks: bool) -> None:
        self._asks[chat_key] = (asks, self._now())
        self._asks.move_to_end(chat_key)
        if len(self._asks) > SETTINGS_KEPT:
            self._asks.popitem(last=False)

    def _now(self) -> float:
        return self.clock.now().timestamp()

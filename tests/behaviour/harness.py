"""The contract every platform harness implements for the shared behaviour suite.

A chat rule (what replaces what, who may answer, what closes when, what an error says) is
written once in tests/behaviour/test_rules.py and runs against each platform through the real
library and its fake server: tests/behaviour/telegram.py (python-telegram-bot + the fake Bot
API) and tests/behaviour/discord.py (discord.py + the fake REST API and gateway).

Places and people are opaque handles that only their harness understands. Every action waits
until the bot has fully handled it (no fixed sleeps) and returns what the acting person saw.
Time moves only through `clock` and `tick()`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.core.service import QuizService
from tests.clock import FakeClock


@dataclass
class Seen:
    """What the acting person saw in reply: texts addressed to them (an alert, an ephemeral
    reply, a message in their private chat, a reply to their command in the chat) and the
    posts of questions that appeared because of the action, in order."""

    texts: list[str] = field(default_factory=list)
    post_ids: list[int] = field(default_factory=list)
    images: list[bytes] = field(default_factory=list)  # pictures in the reply (PNG bytes)
    files: list[bytes] = field(default_factory=list)  # files in the reply (a document, an
    # attachment)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


Place = Any  # a shared chat (Telegram group, Discord guild channel) or a private chat
Person = Any


class Harness(Protocol):
    platform: str  # "telegram" or "discord"
    service: QuizService
    clock: FakeClock

    # who and where ---------------------------------------------------------------------------
    def person(self, n: int, *, language: str = "en") -> Person:
        """A distinct person (n = 1, 2, ...), their platform language set to `language`."""
        ...

    def person_key(self, who: Person) -> str:
        """The core's key for them ("tg:1001", "dc:9000...")."""
        ...

    def group(self) -> Place:
        """One shared chat where everyone may write; `admin` people manage it."""
        ...

    def make_admin(self, who: Person) -> None:
        """`who` may manage the group (Telegram: chat admin; Discord: Manage Server)."""
        ...

    def private(self, who: Person) -> Place:
        """The private chat between `who` and the bot (Telegram private chat, Discord DM)."""
        ...

    # actions -------------------------------------------------------------------------------
    async def quiz(self, where: Place, who: Person, selector: str | None = None, *,
                   count: int | None = None) -> Seen:
        """/quiz [selector] [count]; post_ids has the question that appeared (if any)."""
        ...

    async def change_settings(self, where: Place, who: Person, *, seconds: int | None = None,
                       mode: str | None = None, chart: bool | None = None,
                       quiz: str | None = None, peer: int | str | None = None,
                       discussion: str | None = None,
                       target: int | str | None = None) -> Seen:
        """/settings: shows the chat's settings, or changes the ones given (`quiz`: who
        starts questions, "admins" or "anyone"; `peer`: a peer round's threshold in
        percent; `discussion`: its discussion time as typed, "2" minutes or "90s";
        `target`: the success rate aimed at for someone alone, in percent)."""
        ...

    async def analysis(self, where: Place, who: Person, quiz: str | None = None) -> Seen:
        """/analysis [quiz]: the item analysis; `images` has its chart."""
        ...

    def summary_images(self, post_id: int) -> list[bytes]:
        """The pictures shown with the question's close summary (a chart), in order."""
        ...

    def question_shown(self, post_id: int) -> str:
        """The question as its chat first saw it: a poll's question or a message's text
        (Discord: the embed's title and text)."""
        ...

    def questions_in(self, where: Place) -> list[int]:
        """The posts of every question shown in `where` so far, oldest first."""
        ...

    def posted_texts(self, where: Place) -> list[str]:
        """Plain messages the bot posted in `where` on its own (not a reply to anyone, not
        a question or a question's summary), oldest first: e.g. a round's summary."""
        ...

    async def answer(self, where: Place, who: Person, post_id: int, option: int) -> Seen:
        """Answer shown option `option` of the question of `post_id` the platform's native
        way there (a quiz-poll vote on Telegram polls, a button otherwise)."""
        ...

    async def answer_again(self, where: Place, who: Person, post_id: int, option: int) -> Seen:
        """The very same answer event delivered a second time (Telegram: the same update
        again, e.g. after a crash before the offset was confirmed; Discord: the same
        interaction id again). Must not raise or log errors."""
        ...

    async def forged_click(self, where: Place, who: Person, post_id: int, option: int) -> Seen:
        """A button press naming `post_id`/`option` in its data but made on a message that
        is not that post's (a modified client); must be refused politely."""
        ...

    async def daily_set(self, where: Place, who: Person, at: str = "09:00",
                        zone: str = "UTC") -> Seen:
        ...

    async def daily_off(self, where: Place, who: Person) -> Seen:
        ...

    async def leaderboard(self, where: Place, who: Person) -> Seen:
        ...

    async def set_language(self, where: Place, who: Person, code: str) -> Seen:
        """The person's own language (/lang code)."""
        ...

    async def review(self, where: Place, who: Person) -> Seen:
        """/review: post_ids has the first due card's question (if any was due)."""
        ...

    async def remind(self, where: Place, who: Person, at: str, zone: str = "UTC") -> Seen:
        """/remind HH:MM zone, or `at` "off", or `at` "" for /remind alone."""
        ...

    def private_texts(self, who: Person) -> list[str]:
        """Plain messages tick() sent to `who` privately (a review reminder), in order."""
        ...

    def shown_privately(self, post_id: int) -> bool:
        """Every message showing the question is seen by its person alone (Telegram: in
        their private chat; Discord: ephemeral, or in their DM)."""
        ...

    # a person's own data ---------------------------------------------------------------------
    async def mydata(self, where: Place, who: Person) -> Seen:
        """/mydata: `files` has what was sent to `who` alone (Telegram: a document in their
        private chat; Discord: an ephemeral attachment or one in their DM)."""
        ...

    async def mydata_delete(self, where: Place, who: Person, *, pressed_by: Person = None,
                            forged: bool = False) -> Seen:
        """/mydata delete, then its confirmation button pressed by `pressed_by` (default:
        `who`), its data changed first if `forged`: what the presser saw. No button (the
        command was refused): what `who` saw."""
        ...

    # problem reports -------------------------------------------------------------------------
    async def report_via_flag(self, where: Place, who: Person, post_id: int, text: str) -> Seen:
        """⚑ under the question of `post_id` as shown in `where`, then `text` written where
        the bot asks what is wrong (Telegram: a reply to its private ForceReply prompt;
        Discord: the form it opens). texts: what the bot said once the person wrote."""
        ...

    async def forged_flag(self, where: Place, who: Person, question_id: str) -> Seen:
        """A ⚑ press carrying `question_id`, from a question's message in `where`, as a
        modified client could send it."""
        ...

    async def report(self, where: Place, who: Person, question_id: str | None,
                     text: str) -> Seen:
        """/report [question id] <text>."""
        ...

    async def reports(self, where: Place, who: Person, resolve: int | None = None,
                      note: str | None = None) -> Seen:
        """/reports: the open reports made in `where`; with `resolve`, that one resolved."""
        ...

    async def dashboard(self, where: Place, who: Person, *, revoke: bool = False) -> Seen:
        """/dashboard (or /dashboard revoke): the replies, the private link included."""
        ...

    # help, welcome, languages ------------------------------------------------------------------
    async def help(self, where: Place, who: Person) -> Seen:
        """/help."""
        ...

    async def chat_language(self, where: Place, who: Person, code: str) -> Seen:
        """The chat's language (Telegram: /lang chat code; Discord: /lang scope:channel)."""
        ...

    async def join(self, language: str | None = None) -> Place:
        """The bot is added to a new group (Telegram) or server (Discord), whose platform
        language is `language` if given; returns once the bot handled it."""
        ...

    async def join_again(self, where: Place) -> None:
        """The join of `where` seen again: Telegram delivers its update a second time (as
        after a crash), Discord reconnects (its GUILD_CREATEs are no new join)."""
        ...

    # live sessions and peer rounds ---------------------------------------------------------
    countdown_every: float  # seconds: the platform's least spacing of one message's edits

    async def host(self, where: Place, who: Person, quiz: str | None = None,
                   questions: int | None = None, *, teams: int | None = None,
                   choose: bool = False, seconds: int | None = None) -> Seen:
        """/host [quiz] [N] [teams K [choose]] [seconds]: texts has the lobby (or a refusal,
        or that `who` took the session over)."""
        ...

    async def peer(self, where: Place, who: Person, quiz: str | None = None) -> Seen:
        """/peer [quiz]: post_ids has the round's question."""
        ...

    async def live_step(self, where: Place, who: Person, step: str) -> Seen:
        """/next, /pause, /skip or /end (`step`): post_ids has a question that appeared,
        texts what else the chat or `who` saw (a refusal, the pause, the reveal, the
        podium)."""
        ...

    async def join_live(self, where: Place, who: Person, team: int | None = None) -> Seen:
        """The lobby's Join button (that team's, 1-based, when people choose): texts has the
        notice `who` saw."""
        ...

    async def live_answer(self, where: Place, who: Person, post_id: int, option: int) -> Seen:
        """A press on option `option` of the latest message showing the live question (a
        peer round's revote is a new message): the notice first in texts, then whatever
        the chat saw because of it (the reveal when everyone has answered)."""
        ...

    def live_texts(self, where: Place) -> list[str]:
        """Every message the bot posted in `where` that the whole chat sees, as sent, oldest
        first, but the questions (lobby, reveals, split, results, podium)."""
        ...

    def lobby(self, where: Place) -> tuple[str, int]:
        """The latest lobby's text now, and how many times it was edited."""
        ...

    def live_questions(self, post_id: int) -> list[str]:
        """The texts of the messages that showed the live question, as sent, oldest first
        (a peer round's revote is a second one)."""
        ...

    def question_edits(self, post_id: int) -> int:
        """How many edits the messages showing the live question got (its countdown)."""
        ...

    def live_question_now(self, post_id: int) -> tuple[str, bool]:
        """The newest message that showed the live question, as it reads now, and whether
        it still has buttons."""
        ...

    def allow_threads(self, where: Place) -> None:
        """The bot may open a discussion apart in `where` (Telegram: the group is a forum and
        the bot may create topics; Discord: the bot may start threads). By default it may
        not."""
        ...

    def discussion(self, where: Place) -> tuple[str, list[str]] | None:
        """The topic or thread the bot opened from `where` (the latest), with the texts it
        posted there; None if it opened none."""
        ...

    async def my_place(self, where: Place, who: Person) -> str:
        """Their place after the podium, as told to them alone (Telegram: their private chat;
        Discord: the podium's "My place" button, ephemeral)."""
        ...

    async def tick(self) -> None:
        """One round of the core scheduler (daily posts, due closes, pending summaries),
        then wait until every platform call it caused is done."""
        ...

    def closed_on_platform(self, post_id: int) -> bool:
        """The chat can see that the question closed: its poll stopped / buttons disabled
        and its summary shown (a summary message or the closing edit)."""
        ...

    async def restart(self) -> None:
        """A new bot process on the same database (a new adapter and client)."""
        ...


class KindsHarness(Harness, Protocol):
    """The answers of the kinds of question beyond a single choice (tests/behaviour/
    test_kinds.py). Apart from Harness so the rules' suite runs on a platform before its
    kinds are done."""

    async def answer_picks(self, where: Place, who: Person, post_id: int,
                           shown: set[int]) -> Seen:
        """Several options as one answer (Kind.MULTI): toggles then Submit, or a multi-answer
        poll."""
        ...

    async def answer_typed(self, where: Place, who: Person, post_id: int, text: str) -> Seen:
        """A typed answer: Telegram a reply (group) or a message (private); Discord the modal."""
        ...

    async def answer_order(self, where: Place, who: Person, post_id: int,
                           shown: list[int]) -> Seen:
        """Options put in order by pressing them in sequence (Telegram groups: the letters
        typed)."""
        ...

    async def forged_submit(self, where: Place, who: Person, post_id: int) -> Seen:
        """A component submit the bot never offered (a pick outside the options, an order that
        is not a permutation), as a client could forge it."""
        ...


# the confidence tap (tests/behaviour/test_confidence.py) ---------------------------------
CONFIDENCE_CHOICES = ("Sure", "Think so", "Guessing", "Skip")  # "How sure are you?"'s buttons


class ConfidenceHarness(Harness, Protocol):
    """"How sure are you?" between a press and its answer (/settings confidence on): what
    asks it is the core's rule (bot/core/confidence_ask.py), the same on both platforms."""

    async def set_confidence(self, where: Place, who: Person, on: bool) -> Seen:
        """/settings confidence on|off (Discord: the option confidence:True|False)."""
        ...

    async def tap_confidence(self, where: Place, who: Person, post_id: int,
                             choice: str) -> Seen:
        """One of CONFIDENCE_CHOICES on the "How sure are you?" `who` was last shown for
        the question of `post_id`: what the tap showed. AssertionError if none was shown."""
        ...

    async def forged_tap(self, where: Place, who: Person, post_id: int) -> Seen:
        """A tap for the question of `post_id`, on its own prompt, carrying a confidence
        none of the buttons has, as a modified client could send it."""
        ...


async def stored_refs(storage: Any, post_id: int) -> None:
    """The question's message is known to the countdown once its send returned, which may
    be after the fake saw it: wait for that (on a loaded machine), then let time run."""
    for _ in range(1000):
        if await storage.refs(post_id):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"post {post_id}: no message stored")


# assignments (tests/behaviour/test_assignments.py) -------------------------------------------
class AssignmentHarness(Harness, Protocol):
    """A quiz given to a chat with a deadline (bot/core/assignments.py): the same life on both
    platforms, each with its own way to start a member's private run."""

    async def assign(self, where: Place, who: Person, quiz: str | None = None,
                     date: str | None = None, time: str | None = None,
                     zone: str | None = None) -> Seen:
        """/assign [quiz date [time] [zone]]: texts has the announcement (or the list, or a
        refusal)."""
        ...

    async def unassign(self, where: Place, who: Person, number: str) -> Seen:
        ...

    async def take_assignment(self, where: Place, who: Person) -> Seen:
        """The latest announcement's link (Telegram: t.me/<bot>?start=…, opened in their
        private chat) or button (Discord) in `where`: post_ids has the run's question."""
        ...

    def run_place(self, where: Place, who: Person) -> Place:
        """Where `who` answers an assignment announced in `where` (Telegram: their private
        chat; Discord: the channel, ephemeral)."""
        ...

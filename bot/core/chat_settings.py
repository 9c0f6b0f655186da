"""A chat's own settings (/settings): how long a /quiz question stays open, whether
questions come as polls or as buttons, whether a question's close summary carries a chart
of the answers (off by default), who may start questions and rounds (anyone by default;
asking.py keeps a member from cutting an open question short either way), and a peer round's
threshold (the share right at the first vote that skips the discussion, 70 %) and discussion
time (2 minutes), and whether each answer comes with how sure the person is (sure, think so,
guessing: it sets the review grade and /stats' calibration; off by default), and how often
someone alone should be right (the target success rate their next question is chosen for,
75 %: selection.py). Stored per chat;
unset, the bot's defaults apply (QUIZBOT_QUESTION_SECONDS; the platform's usual way to ask;
no chart; anyone asks; no confidence asked). Only the chat's admins change them: the
platform says who (`allowed=`), the core refuses everyone else."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from bot.core import selection
from bot.core.clock import Clock
from bot.core.errors import (
    MAX_QUESTION_SECONDS,
    MIN_QUESTION_SECONDS,
    BadAsker,
    BadChart,
    BadDiscussion,
    BadMode,
    BadPeerThreshold,
    BadQuestionTime,
    SettingsError,
    bad_setting,
    may_not_change_settings,
)
from bot.core.models import Chat, Person
from bot.core.ports import ChatSettingsRecord, ChatStore, SettingsStore
from bot.i18n import _

PEER_THRESHOLD = 70  # percent: Mazur's usual rule for skipping the discussion
PEER_DISCUSSION = 120  # seconds
MIN_DISCUSSION, MAX_DISCUSSION = 30, 900
# percent right aimed at for someone alone (selection.py), and its bounds
TARGET_PERCENT = round(selection.TARGET * 100)
MIN_TARGET, MAX_TARGET = round(selection.MIN_TARGET * 100), round(selection.MAX_TARGET * 100)


class ChatSettingsStorage(SettingsStore, ChatStore, Protocol):
    """What ChatSettingsRules reads and writes."""


MODES = ("polls", "buttons")
DEFAULT = "default"  # a value that puts a setting back to the bot's default
_MODE_WORDS = {"polls": "polls", "poll": "polls", "buttons": "buttons", "button": "buttons"}
_ASKER_WORDS = {"admins": True, "admin": True, "anyone": False, "everyone": False,
                "all": False}
_DURATION = re.compile(r"(\d{1,4})\s*(s|sec|secs|seconds?|m|min|mins|minutes?)?")
# a question's time: seconds by default, or minutes, hours, days (up to 2,628,000 s)
_QUESTION_TIME = re.compile(
    r"(\d{1,7})\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_CHART_WORDS = {"on": True, "yes": True, "true": True, "off": False, "no": False,
                "false": False}


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """What a chat uses: its own values, or the defaults (`own_time` False)."""

    question_seconds: int
    own_time: bool
    mode: str | None  # "polls", "buttons", or None: the platform's default
    chart: bool = False  # a chart of the answers on each question's close summary
    admins_only: bool = False  # only the chat's admins start questions and rounds
    peer_threshold: int = PEER_THRESHOLD  # percent right at a peer round's first vote that
    # skips the discussion
    peer_discussion: int = PEER_DISCUSSION  # seconds a peer round's discussion lasts
    own_peer_threshold: bool = False
    own_peer_discussion: bool = False
    confidence: bool = False  # ask how sure with each answer (sure, think so, guessing)
    target: int = TARGET_PERCENT  # percent right aimed at for someone alone (selection.py)
    own_target: bool = False

    @property
    def question_time(self) -> timedelta:
        return timedelta(seconds=self.question_seconds)

    @property
    def discussion_time(self) -> timedelta:
        return timedelta(seconds=self.peer_discussion)


def parse_seconds(value: int | str) -> int | None:
    """Seconds from a number or what a person typed ("90", "90s", "10m", "2h", "3d"); None
    for "default"."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == DEFAULT:
            return None
        found = _QUESTION_TIME.fullmatch(text)
        if found is None:
            raise BadQuestionTime(value)
        value = int(found[1]) * _UNIT_SECONDS[(found[2] or "s")[0]]
    if not MIN_QUESTION_SECONDS <= value <= MAX_QUESTION_SECONDS:
        raise BadQuestionTime(value)
    return value


def parse_words(words: Sequence[str]) -> dict[str, str]:
    """/settings as typed: "time 90", "mode buttons", both in any order. SettingsError for
    a word that names no setting; the values are checked by `change`."""
    changes: dict[str, str] = {}
    for i in range(0, len(words), 2):
        name, value = words[i].lower(), words[i + 1] if i + 1 < len(words) else ""
        if name in ("time", "seconds"):
            changes["seconds"] = value
        elif name == "mode":
            changes["mode"] = value
        elif name == "chart":
            changes["chart"] = value
        elif name == "quiz":
            changes["quiz"] = value
        elif name in ("peer", "threshold"):
            changes["peer"] = value
        elif name == "discussion":
            changes["discussion"] = value
        elif name == "confidence":
            changes["confidence"] = value
        elif name == "target":
            changes["target"] = value
        else:
            raise bad_setting(words[i])
    return changes


def parse_threshold(value: int | str) -> int | None:
    """A percentage ("80", "80%") of right first votes, 1..100; None for "default"."""
    return _percent(value, 1, 100, BadPeerThreshold)


def _percent(value: int | str, low: int, high: int,
             refused: Callable[[str], SettingsError]) -> int | None:
    """A whole percentage from `low` to `high`, "%" allowed; None for "default"."""
    text = str(value).strip().lower()
    if text == DEFAULT:
        return None
    try:
        number = int(text.removesuffix("%").strip())
    except ValueError:
        raise refused(str(value)) from None
    if not low <= number <= high:
        raise refused(str(value))
    return number


def parse_discussion(value: int | str) -> int | None:
    """Seconds from minutes ("2", "2m", "2min") or seconds ("90s"), 30 s..15 min; None for
    "default"."""
    text = str(value).strip().lower()
    if text == DEFAULT:
        return None
    found = _DURATION.fullmatch(text)
    if found is None:
        raise BadDiscussion(str(value))
    seconds = int(found[1]) * (1 if (found[2] or "m").startswith("s") else 60)
    if not MIN_DISCUSSION <= seconds <= MAX_DISCUSSION:
        raise BadDiscussion(str(value))
    return seconds


def parse_mode(value: str) -> str | None:
    text = value.strip().lower()
    if text == DEFAULT:
        return None
    if text not in _MODE_WORDS:
        raise BadMode(value)
    return _MODE_WORDS[text]


def parse_flag(
    value: bool | str, words: dict[str, bool], error: Callable[[str], SettingsError]
) -> bool | None:
    """A yes/no setting from a flag or one of its `words` as typed; None for "default"."""
    if isinstance(value, bool):
        return value
    text = value.strip().lower()
    if text == DEFAULT:
        return None
    if text not in words:
        raise error(value)
    return words[text]


def parse_chart(value: bool | str) -> bool | None:
    """On or off ("on", "off")."""
    return parse_flag(value, _CHART_WORDS, BadChart)


def bad_confidence(text: str) -> SettingsError:
    return SettingsError(_("“{text}” is neither on nor off: /settings confidence on or off."),
                         text=text)


def parse_confidence(value: bool | str) -> bool | None:
    """Whether to ask how sure with each answer: "on", "off"."""
    return parse_flag(value, _CHART_WORDS, bad_confidence)


# the target success rate (questions at the right difficulty: bot/core/difficulty.py)
def bad_target(text: str) -> SettingsError:
    return SettingsError(_("“{text}” is not a success rate from 50 to 95: /settings target 75, "
                           "for example (percent)."), text=text)


def parse_target(value: int | str) -> int | None:
    """A percentage ("80", "80%") of right answers to aim at, 50..95; None for "default"."""
    return _percent(value, MIN_TARGET, MAX_TARGET, bad_target)


def parse_asker(value: bool | str) -> bool | None:
    """Admins only (True) or anyone (False): "admins", "anyone"."""
    return parse_flag(value, _ASKER_WORDS, BadAsker)


class ChatSettingsRules:
    def __init__(self, storage: ChatSettingsStorage, clock: Clock, default_time: timedelta) -> None:
        self.storage = storage
        self.clock = clock
        self.default_time = default_time
        # told of each change made in this process (confidence_ask.py's remembered setting)
        self.listeners: list[Callable[[str, ChatSettings], None]] = []

    async def get(self, chat_key: str) -> ChatSettings:
        own = await self.storage.get_chat_settings(chat_key)
        seconds = own.question_seconds if own else None
        return ChatSettings(
            question_seconds=seconds or round(self.default_time.total_seconds()),
            own_time=seconds is not None,
            mode=own.mode if own else None,
            chart=bool(own and own.chart),
            admins_only=bool(own and own.admins_only),
            peer_threshold=own.peer_threshold if own and own.peer_threshold else PEER_THRESHOLD,
            peer_discussion=own.peer_discussion if own and own.peer_discussion
            else PEER_DISCUSSION,
            own_peer_threshold=bool(own and own.peer_threshold),
            own_peer_discussion=bool(own and own.peer_discussion),
            confidence=bool(own and own.confidence),
            target=own.target if own and own.target else TARGET_PERCENT,
            own_target=bool(own and own.target),
        )

    async def question_time(self, chat_key: str) -> timedelta:
        return (await self.get(chat_key)).question_time

    async def change(
        self, chat: Chat, *, by: Person | None = None, allowed: bool,
        seconds: int | str | None = None, mode: str | None = None,
        chart: bool | str | None = None, admins_only: bool | str | None = None,
        peer_threshold: int | str | None = None, peer_discussion: int | str | None = None,
        confidence: bool | str | None = None, target: int | str | None = None,
        words: Sequence[str] = (),
    ) -> ChatSettings:
        """Change what is given (None: unchanged; "default": back to the default), or what
        `words` say (/settings as typed). Every value is checked before anything is
        stored."""
        if not allowed:
            raise may_not_change_settings()
        typed = parse_words(words)
        seconds = typed.get("seconds", seconds)
        mode = typed.get("mode", mode)
        chart = typed.get("chart", chart)
        admins_only = typed.get("quiz", admins_only)
        peer_threshold = typed.get("peer", peer_threshold)
        peer_discussion = typed.get("discussion", peer_discussion)
        confidence = typed.get("confidence", confidence)
        target = typed.get("target", target)
        new_seconds = parse_seconds(seconds) if seconds is not None else None
        new_mode = parse_mode(mode) if mode is not None else None
        new_chart = parse_chart(chart) if chart is not None else None
        new_asker = parse_asker(admins_only) if admins_only is not None else None
        new_threshold = parse_threshold(peer_threshold) if peer_threshold is not None else None
        new_discussion = parse_discussion(peer_discussion) if peer_discussion is not None \
            else None
        new_confidence = parse_confidence(confidence) if confidence is not None else None
        new_target = parse_target(target) if target is not None else None
        old = await self.storage.get_chat_settings(chat.key) or ChatSettingsRecord(chat.key)
        record = ChatSettingsRecord(
            chat.key,
            question_seconds=new_seconds if seconds is not None else old.question_seconds,
            mode=new_mode if mode is not None else old.mode,
            chart=new_chart if chart is not None else old.chart,
            admins_only=new_asker if admins_only is not None else old.admins_only,
            peer_threshold=new_threshold if peer_threshold is not None else old.peer_threshold,
            peer_discussion=new_discussion if peer_discussion is not None
            else old.peer_discussion,
            confidence=new_confidence if confidence is not None else old.confidence,
            target=new_target if target is not None else old.target,
        )
        if record != old:
            await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
            await self.storage.set_chat_settings(record, self.clock.now(),
                                                 by.key if by else None)
        settings = await self.get(chat.key)
        for listener in self.listeners:
            listener(chat.key, settings)
        return settings

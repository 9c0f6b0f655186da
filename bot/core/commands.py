"""Every chat command, declared once for every platform: its name there, who uses it and where,
its /help lines (msgids) and its place in Telegram's command menu.

Telegram's handlers (adapters/telegram/routes.py), its command menu and its /help, and
Discord's /help (from its command tree) are built from these declarations; each adapter
supplies the handler of each command it has (Telegram: `handles(key)` beside the handler;
Discord: the app command in its cog, named as declared here). tests/test_commands.py reads the
real Application's handlers and the real CommandTree and fails on a command registered and not
declared, declared and not registered, or a /help or menu that is not the declarations'.

The two platforms type a command differently (`/report <question id> …` on Telegram,
`/report question: …` on Discord), so each has its own /help lines; their order is the order
of the declarations, first the lines for everyone, then those for admins (core/help.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal

from bot.core.help import Entry, Where
from bot.i18n import _

Platform = Literal["telegram", "discord"]
PLATFORMS: tuple[Platform, ...] = ("telegram", "discord")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of /help (a msgid). `where` and `admin` left None are the command's."""

    text: str
    where: Where | None = None
    admin: bool | None = None


@dataclass(frozen=True, slots=True, init=False)
class On:
    """The command on one platform: its /help lines there (none: /help names it in another
    command's line, as /host's names /next) and its name there if it is not the key."""

    help: tuple[Line, ...]
    name: str | None

    def __init__(self, *help: Line, name: str | None = None) -> None:
        object.__setattr__(self, "help", help)
        object.__setattr__(self, "name", name)


@dataclass(frozen=True, slots=True)
class Menu:
    """An entry in Telegram's command menu: its position there and its description (msgid)."""

    position: int
    description: str


@dataclass(frozen=True, slots=True)
class Command:
    """`key`: the command's name in these declarations; `where`: the chats it works in;
    `admin`: only the chat's admins may use it (the core checks it, `allowed=`)."""

    key: str
    telegram: On | None = None
    discord: On | None = None
    where: Where = Where.ANYWHERE
    admin: bool = False
    menu: Menu | None = None

    def on(self, platform: Platform) -> On | None:
        return self.telegram if platform == "telegram" else self.discord

    def name_on(self, platform: Platform) -> str | None:
        """What is typed after the slash there (None: the platform does not have it)."""
        there = self.on(platform)
        return None if there is None else there.name or self.key

    def entries(self, platform: Platform) -> tuple[Entry, ...]:
        """Its /help lines there, each with where and who it is for."""
        there = self.on(platform)
        return () if there is None else tuple(
            Entry(line.text, self.where if line.where is None else line.where,
                  self.admin if line.admin is None else line.admin)
            for line in there.help)


COMMANDS: tuple[Command, ...] = (
    # asking (core/asking.py, rounds.py, quiz_runs.py)
    Command(
        "quiz",
        telegram=On(
            Line(_("/quiz — a question now (in a group, for everyone)")),
            Line(_("/quiz <quiz id> — the whole quiz, one question after another, just for "
                   "you"), Where.PRIVATE),
            Line(_("/quiz <quiz or topic> N — N questions in a row for the group"),
                 Where.SHARED),
        ),
        discord=On(
            Line(_("/quiz — a question now, for everyone in this channel")),
            Line(_("/quiz quiz: <quiz id> run: True — the whole quiz, one question after "
                   "another, just for you")),
            Line(_("/quiz quiz: <quiz or topic> questions: N — N questions in a row for the "
                   "channel"), Where.SHARED),
        ),
        menu=Menu(1, _("A question now, or a whole quiz: /quiz <quiz>")),
    ),
    # boards (core/boards.py)
    Command(
        "leaderboard",
        telegram=On(Line(_("/leaderboard [day|week|all] — who knows best"))),
        discord=On(Line(_("/leaderboard — who knows best"))),
        menu=Menu(2, _("Who knows best: /leaderboard [day|week|all]")),
    ),
    Command(
        "stats",
        telegram=On(Line(_("/stats — your answers, accuracy and streaks"))),
        discord=On(Line(_("/stats — your answers, accuracy and streaks"))),
        menu=Menu(3, _("Your answers, accuracy and streaks")),
    ),
    # spaced review (core/review.py, review_export.py)
    Command(
        "review",
        telegram=On(Line(_("/review — the questions due for review, in our private chat"))),
        discord=On(Line(_("/review — the questions due for review"))),
        menu=Menu(4, _("Go through the questions due for review; /review export: an Anki "
                       "deck")),
    ),
    Command(
        "review-export",
        telegram=On(Line(_("/review export — your due and missed questions as an Anki deck")),
                    name="review"),  # /review's handler leaves it `/review export`
        discord=On(Line(_("/review-export — your due and missed questions as an Anki deck"))),
    ),
    Command(
        "remind",
        telegram=On(Line(_("/remind HH:MM [zone] — a daily reminder when reviews are due; "
                           "/remind off"))),
        discord=On(Line(_("/remind time: HH:MM timezone: <zone> — a daily reminder when "
                          "reviews are due"))),
        menu=Menu(5, _("A daily review reminder: /remind HH:MM [Time/Zone], /remind off")),
    ),
    # languages (core/locales.py)
    Command(
        "lang",
        telegram=On(
            Line(_("/lang <en|bn|hi> — your language")),
            Line(_("/lang chat <en|bn|hi|auto> — the group's language"), Where.SHARED,
                 admin=True),
        ),
        discord=On(
            Line(_("/lang code: <language> — your language")),
            Line(_("/lang code: <language> scope: channel — the channel's language"),
                 Where.SHARED, admin=True),
        ),
        menu=Menu(6, _("Your language: /lang en|bn|hi")),
    ),
    # problem reports (core/problem_reports.py)
    Command(
        "report",
        telegram=On(Line(_("/report <question id> <what is wrong> — report a wrong or unclear "
                           "question; /report <what is wrong> for the last one you answered"))),
        discord=On(Line(_("/report question: <question id> text: <what is wrong> — report a "
                          "wrong or unclear question"))),
        menu=Menu(9, _("Report a wrong question: /report <question id> <what is wrong>")),
    ),
    # daily questions (core/daily.py)
    Command(
        "daily",
        telegram=On(
            Line(_("/daily — this chat's daily question")),
            Line(_("/daily HH:MM [zone] [quiz] — a question every day; /daily off"),
                 admin=True),
        ),
        discord=On(
            Line(_("/daily status — this channel's daily question")),
            Line(_("/daily set time: HH:MM timezone: <zone> — a question every day; /daily "
                   "off"), admin=True),
        ),
        menu=Menu(7, _("A question every day: /daily HH:MM [Time/Zone] [quiz]")),
    ),
    # chat settings (core/chat_settings.py)
    Command(
        "settings",
        telegram=On(
            Line(_("/settings — this chat's question time, mode and who may ask")),
            Line(_("/settings time SECONDS, mode polls|buttons, chart on|off, "
                   "quiz admins|anyone, confidence on|off — change them"), admin=True),
        ),
        discord=On(
            Line(_("/settings — this channel's question time and who may ask")),
            Line(_("/settings time: chart: quiz: confidence: — change them"), admin=True),
        ),
        menu=Menu(8, _("This chat's question time and mode (admins)")),
    ),
    # assignments (core/assignments.py): a quiz the chat finishes privately by a deadline
    Command(
        "assign", where=Where.SHARED,
        telegram=On(
            Line(_("/assign — this chat's assignments")),
            Line(_("/assign <quiz or topic> <YYYY-MM-DD> [HH:MM] [zone] — a quiz everyone "
                   "takes privately by a deadline; /unassign <id>"), admin=True),
        ),
        discord=On(
            Line(_("/assign — this channel's assignments")),
            Line(_("/assign quiz: date: time: timezone: — a quiz everyone takes privately by "
                   "a deadline; /unassign id:"), admin=True),
        ),
        menu=Menu(19, _("A quiz everyone takes privately by a deadline (admins)")),
    ),
    Command("unassign", where=Where.SHARED, admin=True, telegram=On(), discord=On()),
    # item analysis (core/chat_analysis.py)
    Command(
        "analysis", admin=True,
        telegram=On(Line(_("/analysis [quiz] — which questions work, with a chart"))),
        discord=On(Line(_("/analysis — which questions work, with a chart"))),
        menu=Menu(10, _("Which questions work: item analysis with a chart (admins)")),
    ),
    Command(
        "reports", admin=True,
        telegram=On(Line(_("/reports — open reports about questions asked here; /reports "
                           "resolve <id> [note]"))),
        discord=On(Line(_("/reports — open reports about questions asked here, and resolving "
                          "one"))),
        menu=Menu(11, _("Open reports about questions asked here (admins)")),
    ),
    # the web dashboard (core/dashboard.py)
    Command(
        "dashboard", admin=True,
        telegram=On(Line(_("/dashboard — a private link to this chat's web dashboard; "
                           "/dashboard revoke"))),
        discord=On(Line(_("/dashboard — a private link to this channel's web dashboard; "
                          "revoke: True"))),
        menu=Menu(12, _("A private link to this chat's web dashboard (admins)")),
    ),
    # help and the welcome (core/help.py)
    Command(
        "help",
        telegram=On(Line(_("/help — this list"))),
        discord=On(Line(_("/help — this list"))),
        menu=Menu(17, _("What this bot does and how to use it")),
    ),
    Command("start", telegram=On(), menu=Menu(18, _("Start here"))),  # /help, or a quiz's link
    Command(
        "progress",
        telegram=On(Line(_("/progress — your answers, accuracy per topic and due reviews, in "
                           "Telegram"))),
        menu=Menu(13, _("Your answers, accuracy per topic and due reviews, in Telegram")),
    ),
    # a person's own data (core/privacy.py)
    Command(
        "mydata",
        telegram=On(Line(_("/mydata — what I store about you, as a file; /mydata delete "
                           "deletes it"), Where.PRIVATE)),
        discord=On(Line(_("/mydata — what I store about you, as a file; /mydata delete: True "
                          "deletes it"))),
        menu=Menu(16, _("What the bot stores about you, as a file; /mydata delete")),
    ),
    # authoring (core/authoring.py): quiz polls an author sends privately become a pack
    Command("whoami", telegram=On(Line(_("/whoami — your numeric id, which the operator adds "
                                         "to let you write quizzes"), Where.PRIVATE))),
    *(Command(name, telegram=On(), where=Where.PRIVATE)
      for name in ("newpack", "draft", "undo", "name", "publish", "discard", "unpublish")),
    # a question of any kind written as a form (core/authoring_form.py): /question <kind>
    Command("question", telegram=On(), where=Where.PRIVATE),
    # live sessions and peer rounds (core/live.py, peer.py)
    Command(
        "host", where=Where.SHARED, admin=True,
        telegram=On(Line(_("/host [quiz] [N] [teams K [choose]] [speed] — a live quiz you "
                           "pace: /next, /pause, /skip, /end"))),
        discord=On(),
        menu=Menu(14, _("Host a live quiz: /host [quiz] [N] [teams K [choose]] [speed] "
                        "(admins)")),
    ),
    Command(
        "peer", where=Where.SHARED, admin=True,
        telegram=On(Line(_("/peer [quiz] — vote alone, discuss, vote again"))),
        discord=On(),
        menu=Menu(15, _("A peer-instruction round: vote, discuss, vote again (admins)")),
    ),
    # the host's steps: /host's line names them
    *(Command(name, telegram=On(), discord=On(), where=Where.SHARED)
      for name in ("next", "pause", "skip", "end")),
)


def declared(key: str) -> Command:
    """The declaration of `key` (KeyError: not declared)."""
    return BY_KEY[key]


def names(platform: Platform, declarations: Iterable[Command] | None = None) -> list[str]:
    """What the platform registers, in the order of the declarations, once each."""
    return list(dict.fromkeys(
        name for command in declarations or COMMANDS
        if (name := command.name_on(platform)) is not None))


def help_entries(platform: Platform, registered: Collection[str] | None = None,
                 declarations: Iterable[Command] | None = None) -> tuple[Entry, ...]:
    """The platform's /help lines in the order of the declarations; `registered`: only of the
    commands registered there under these names (None: every one declared there)."""
    return tuple(
        entry for command in declarations or COMMANDS
        if registered is None or command.name_on(platform) in registered
        for entry in command.entries(platform)
    )


def menu(declarations: Iterable[Command] | None = None) -> tuple[tuple[str, str], ...]:
    """Telegram's command menu: (command, description msgid), in the menu's order."""
    entries = sorted(
        (command.menu.position, name, command.menu.description)
        for command in declarations or COMMANDS
        if command.menu is not None and (name := command.name_on("telegram")) is not None)
    return tuple((name, description) for _position, name, description in entries)


BY_KEY = {command.key: command for command in COMMANDS}
assert len(BY_KEY) == len(COMMANDS), "a command key declared twice"

"""Take a quiz in the terminal: the same core and database as the chat adapters."""

from __future__ import annotations

import asyncio
import getpass
import logging
import os
import shlex
import shutil
import sys
import textwrap
import threading
from typing import TextIO

from bot.content import Quiz
from bot.content.items import Kind
from bot.core import render
from bot.core.errors import UnknownQuiz, UserError
from bot.core.models import AnswerResult, AnswerStatus, Chat, Person, Response, ShownQuestion, Typed
from bot.core.service import QuizService
from bot.i18n import Translator, translator

CHAT = Chat("console", "console", is_private=True)


def command(action: str = "play") -> str:
    """How to run `quizbot <action>` again from here: plain `quizbot` when that is on PATH,
    else the program as it was started (`.venv/bin/quizbot`, `python -m bot`)."""
    program = sys.argv[0] if sys.argv and sys.argv[0] else "quizbot"
    if program.endswith(("__main__.py", "-m")):
        return f"python -m bot {action}"
    on_path = shutil.which("quizbot")
    if on_path and os.path.realpath(on_path) == os.path.realpath(program):
        return f"quizbot {action}"
    relative = os.path.relpath(program) if os.path.isabs(program) else program
    return f"{relative if os.sep in relative else 'quizbot'} {action}"


def resume_command(person: Person, locale: str | None) -> str:
    """`command("play")` with the options the quiz was started with, so the same person
    goes on in the same language."""
    words = [command("play")]
    if locale:
        words.append(f"--lang {locale}")
    if person.name != getpass.getuser():
        words.append(f"--name {shlex.quote(person.name)}")
    return " ".join(words)


def banner_text(t: Translator) -> str:
    """Said when `quizbot run` finds no chat bot token and starts the console quiz."""
    return "\n".join([
        t.gettext("No chat bot token is set ({variables}), so quizbot starts the console "
                  "quiz.", variables="TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN"),
        t.gettext("To run a chat bot, put a token in the environment or in {file} (see "
                  "{example}), for example:", file=".env", example=".env.example"),
        "  TELEGRAM_BOT_TOKEN=123456:ABC... quizbot run",
        "",
    ])


def quiet_logs() -> None:
    """The terminal is the quiz's: only problems are logged there, not start-up news (a new
    database's schema) in English between the questions."""
    root = logging.getLogger()
    root.setLevel(max(root.level, logging.WARNING))


def wrap(text: str, width: int | None = None) -> str:
    """Break long lines between words, never inside one (a Bengali vowel sign stays with its
    letter), to the terminal's width."""
    width = width or min(shutil.get_terminal_size((100, 24)).columns, 100)
    return "\n".join(
        textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False,
                      replace_whitespace=False, drop_whitespace=True,
                      subsequent_indent=" " * (len(line) - len(line.lstrip())))
        if len(line) > width else line
        for line in text.split("\n")
    )


def console_person(name: str | None = None) -> Person:
    name = name or getpass.getuser()
    return Person(f"console:{name}", name)


class LineReader:
    """stdin lines through a daemon thread, so Ctrl-C never waits for a blocked read."""

    def __init__(self, stream: TextIO = sys.stdin) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def pump() -> None:
            for line in stream:
                loop.call_soon_threadsafe(self._queue.put_nowait, line)
            loop.call_soon_threadsafe(self._queue.put_nowait, None)

        threading.Thread(target=pump, daemon=True, name="stdin").start()

    async def readline(self) -> str | None:
        """A line without its newline, or None at end of input (Ctrl-D)."""
        line = await self._queue.get()
        return None if line is None else line.rstrip("\r\n")


class ConsoleQuiz:
    def __init__(
        self,
        service: QuizService,
        person: Person,
        locale: str | None = None,
        out: TextIO = sys.stdout,
        *,
        banner: bool = False,
    ) -> None:
        """`banner`: say first why this is the console quiz (`quizbot run` with no token)."""
        self.service = service
        self.person = person
        self.locale = locale
        self.out = out
        self.banner = banner

    def say(self, text: str = "") -> None:
        print(wrap(text), file=self.out, flush=True)

    def media(self, question: ShownQuestion) -> None:
        """What a chat shows on the question's card, as text: the code highlighted for a
        terminal (plain when the output is not one), the formula as Unicode text, the image by
        its file. Printed as it is: code must keep its lines and indentation."""
        if question.code is not None:
            code = question.code
            if self.out.isatty():
                from pygments import highlight
                from pygments.formatters import TerminalFormatter
                from pygments.lexers import get_lexer_by_name

                code = highlight(code, get_lexer_by_name(question.code_language),
                                 TerminalFormatter()).rstrip("\n")
            print(textwrap.indent(code, "    "), file=self.out, flush=True)
            print(file=self.out)
        if question.formula is not None:
            from bot.content.mathtext import text as formula_text

            print(f"    {formula_text(question.formula)}\n", file=self.out, flush=True)
        if question.image is not None:
            print(f"    🖼  {question.image}\n", file=self.out, flush=True)

    async def play(self, quiz_id: str | None = None, reader: LineReader | None = None) -> int:
        """Run (or resume) a quiz; returns the process exit status."""
        reader = reader or LineReader()
        locale = self.locale or await self.service.locales.for_person(self.person, CHAT)
        t = translator(locale)
        if self.banner:  # beside the quiz, not in it (stdout may be kept as a transcript)
            print(wrap(banner_text(t)), file=sys.stderr, flush=True)
        runs = self.service.runs
        try:
            unfinished = await runs.active(self.person, CHAT)
            if quiz_id is None and unfinished is None:
                quiz_id = await self._choose(reader, t)
                if quiz_id is None:
                    return 0
            quiz = self.service.questions.quiz_named(quiz_id)
            if quiz_id and quiz is None:  # a topic is not a quiz to take in order
                raise UnknownQuiz(quiz_id)
            if unfinished is not None and quiz is not None and quiz.id != unfinished.quiz_id:
                current = await runs.current(unfinished, CHAT, locale)
                if current is not None and not await self._discard(reader, current, quiz, t):
                    quiz = None  # keep the unfinished one and go on with it
            question = await runs.start(self.person, CHAT, quiz, locale)
        except UserError as exc:
            self.say(render.error_text(exc, t, self.service.questions.quizzes(locale)))
            return 2
        if unfinished is not None and question.run_id == unfinished.id:
            assert question.number is not None and question.total is not None  # a run's
            self.say(t.gettext("Resuming {title} at question {number} of {total}.",
                               title=question.quiz_title, number=t.number(question.number),
                               total=t.number(question.total)))
        while True:
            self.say()
            head, prompt, options = render.question_parts(question, t)
            self.say(f"{head}\n\n{prompt}" if prompt else head)
            self.say()
            if question.has_card:
                self.media(question)
            self.say(options)
            result = await self._answer(reader, question, t, locale)
            if result is None:
                self.say()
                self.say(t.gettext("Progress saved. Run `{command}` again to continue.",
                                   command=resume_command(self.person, self.locale)))
                return 0
            self.say(render.result_text(result, t, details=True))
            if result.run_summary is not None:
                self.say()
                self.say(render.run_summary_text(result.run_summary, t))
                return 0
            if result.next_question is None:  # already answered elsewhere: ask where we are
                run = await runs.active(self.person, CHAT)
                nxt = await runs.current(run, CHAT, locale) if run else None
                if nxt is None:
                    return 0
                question = nxt
            else:
                question = result.next_question

    async def _answer(
        self, reader: LineReader, question: ShownQuestion, t: Translator, locale: str
    ) -> AnswerResult | None:
        """Ask until the answer is taken: a letter for a choice; for the other kinds what is
        typed (a number, a text, the letters of an order or of several picks), asked again
        while the core cannot read it (it says what to type). None at end of input."""
        while True:
            if question.kind in (Kind.CHOICE, Kind.TRUEFALSE):
                shown = await self._ask_letter(reader, question, t)
                if shown is None:
                    return None
                response: Response = shown
            else:
                print(t.gettext("Your answer (Ctrl-D to stop): "), end="", file=self.out,
                      flush=True)
                line = await reader.readline()
                if line is None:
                    return None
                response = Typed(line)
            result = await self.service.answer(question.post_id, self.person, response,
                                               locale=locale)
            if result.status is not AnswerStatus.INVALID_OPTION:
                return result
            self.say(render.result_text(result, t))

    async def _ask_letter(
        self, reader: LineReader, question: ShownQuestion, t: Translator
    ) -> int | None:
        letters = render.LETTERS[: len(question.options)]
        while True:
            print(
                t.gettext("Your answer ({first}–{last}, Ctrl-D to stop): ",
                          first=letters[0], last=letters[-1]),
                end="", file=self.out, flush=True,
            )
            line = await reader.readline()
            if line is None:
                return None
            choice = line.strip().upper()
            if len(choice) == 1 and choice in letters:
                return letters.index(choice)
            self.say(t.gettext("Please type one of: {letters}", letters=", ".join(letters)))

    async def _discard(
        self, reader: LineReader, current: ShownQuestion, new: Quiz, t: Translator
    ) -> bool:
        """Starting another quiz ends the unfinished one: only if the person says so."""
        assert current.number is not None and current.total is not None  # a run's question
        self.say(t.gettext(
            "You have an unfinished quiz: {title}, question {number} of {total}.",
            title=current.quiz_title, number=t.number(current.number),
            total=t.number(current.total),
        ))
        print(t.gettext("Start {title} instead and drop it? (y/N) ",
                        title=new.title.get(t.locale)), end="", file=self.out, flush=True)
        line = await reader.readline()
        return line is not None and line.strip().lower() in {"y", "yes"}

    async def _choose(self, reader: LineReader, t: Translator) -> str | None:
        quizzes = self.service.questions.quizzes(t.locale)
        self.say(t.gettext("Choose a quiz:"))
        for i, quiz in enumerate(quizzes, start=1):
            self.say(f"  {i}. {quiz.title} ({quiz.id})")
        while True:
            print(t.gettext("Number or id: "), end="", file=self.out, flush=True)
            line = await reader.readline()
            if line is None:
                return None
            choice = line.strip()
            if choice.isdigit() and 1 <= int(choice) <= len(quizzes):
                return quizzes[int(choice) - 1].id
            if any(q.id == choice for q in quizzes):
                return choice
            self.say(t.gettext("Please type a number from the list."))

"""Take a quiz in the terminal: the same core and database as the chat adapters."""

from __future__ import annotations

import asyncio
import getpass
import sys
import threading
from typing import TextIO

from bot.core import render
from bot.core.errors import UnknownQuiz, UserError
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.service import QuizService
from bot.i18n import Translator, translator

CHAT = Chat("console", "console", is_private=True)


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
    ) -> None:
        self.service = service
        self.person = person
        self.locale = locale
        self.out = out

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    async def play(self, quiz_id: str | None = None, reader: LineReader | None = None) -> int:
        """Run (or resume) a quiz; returns the process exit status."""
        reader = reader or LineReader()
        locale = self.locale or await self.service.locale_for(self.person, CHAT)
        t = translator(locale)
        runs = self.service.runs
        try:
            if quiz_id is None and await runs.active(self.person, CHAT) is None:
                quiz_id = await self._choose(reader, t)
                if quiz_id is None:
                    return 0
            quiz = self.service.questions.quiz_named(quiz_id)
            if quiz_id and quiz is None:  # a topic is not a quiz to take in order
                raise UnknownQuiz(quiz_id)
            question = await runs.start(self.person, CHAT, quiz, locale)
        except UserError as exc:
            self.say(render.error_text(exc, t, self.service.quizzes(locale)))
            return 2
        while True:
            self.say()
            self.say(render.question_text(question, t))
            shown = await self._ask_letter(reader, question, t)
            if shown is None:
                self.say()
                self.say(t.gettext("Progress saved. Run `quizbot play` again to continue."))
                return 0
            result = await self.service.answer(question.post_id, self.person, shown, locale=locale)
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

    async def _choose(self, reader: LineReader, t: Translator) -> str | None:
        quizzes = self.service.quizzes(t.locale)
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

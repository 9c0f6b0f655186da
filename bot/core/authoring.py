"""Writing a quiz in a chat (@QuizBot's way): an author's quiz polls become the questions of
their draft, which they name and publish as a pack.

- Only the configured authors may write; anyone else is refused and nothing is stored.
- A question is acknowledged only after it is stored: drafts live in the database (one per
  author), so a restart loses nothing. The same message twice adds one question.
- A draft is written in one language, its author's when it starts; the pack names it
  (`language:`), and readers of other languages see that one.
- Publishing validates the pack exactly as `quizbot content import csv` does (the same YAML
  writer and the loader: schema, Telegram and Discord limits); any error publishes nothing
  and comes back as problems (question, field, what) the author reads in their language.
- A published pack is stored as YAML and added to this process's catalog at once; every
  process loads them at start (load()), and the others see it (or its withdrawal) through
  refresh(): the scheduler's tick compares the database's version of the packs every round
  (so within about a second, on SQLite and PostgreSQL alike), and `/quiz <id>` or an answer
  naming a quiz this process does not know yet refreshes at once before anything is refused.
  Its id comes from the title (Bengali and Devanagari spelled in Latin letters) or is the
  one the author gives (`/publish <id>`), and may not be one the catalog has; its question
  ids are `<pack id>-<n>`. Its title may not be another quiz's (compared case- and
  space-blind).
- `/unpublish <id>` (the author who published it) withdraws a pack: no longer offered, kept in
  the catalog by id and in the database, so its answers, boards and id stay.
- A quiz poll with several right options (Telegram's quiz polls take them) is a question
  with several right answers (`kind: multi`). Every kind can be written as a form,
  `/question <kind>` and one field a line (authoring_form.py): the form and then the
  validator are applied before anything is stored; a form with a problem is refused with
  every problem, nothing stored.
- A photo (or a PNG or JPEG file) sent just before a quiz poll becomes that question's
  picture (`image:`): checked as a pack's images are (size cap, PNG or JPEG that decodes,
  pixel cap) when it arrives, a bad one refused with nothing changed; it waits in the draft
  (database) until the next poll takes it. A published pack's pictures are stored with it
  and written beside its YAML wherever it is loaded (`images/<pack id>-<n>.png|jpg`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import tempfile
import unicodedata
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.content import Catalog, limits, media
from bot.content.problems import Problem
from bot.core import errors
from bot.core.authoring_form import WrittenQuestion, read
from bot.core.clock import Clock
from bot.core.models import Person
from bot.core.ports import AuthoredPackRecord, DraftRecord, DraftStore
from bot.i18n import LANGUAGE_NAMES, Translator, _

if TYPE_CHECKING:  # the YAML parsers and validators load with the first pack checked
    from bot.content.pack_writer import Files, PackSource

log = logging.getLogger(__name__)

ID_LENGTH = 40  # a slug has at most 48 characters: room for "-<question number>"
SHOWN_PROMPT = 60  # characters of each question /draft lists


@dataclass(frozen=True, slots=True)
class PollQuestion:
    """A poll as the platform delivered it."""

    prompt: str
    options: tuple[str, ...]
    correct: tuple[int, ...]  # empty when the platform hides it (a forwarded poll)
    explanation: str | None = None
    quiz: bool = True  # a quiz poll (not a regular one)


@dataclass(frozen=True, slots=True)
class PackProblem:
    """One validation error: where (question number, None for the pack itself; the field)
    and what, as a msgid with its values."""

    question: int | None
    part: str  # "title", "question", "options", "option", "explanation", or "" (unknown)
    option: int | None
    template: str
    values: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Added:
    """`number`: the question's in the draft; None: a form refused, nothing stored."""

    number: int | None
    problems: tuple[PackProblem, ...] = ()  # what would stop this question being published


@dataclass(frozen=True, slots=True)
class DraftView:
    title: str | None
    locale: str
    prompts: tuple[str, ...]
    pictures: tuple[bool, ...] = ()  # per question: whether it has a picture
    photo_waiting: bool = False  # a photo sent for the next question
    kinds: tuple[str, ...] = ()  # per question: its kind (items.Kind's value)


@dataclass(frozen=True, slots=True)
class Published:
    quiz_id: str | None  # None: not published, see problems
    title: str = ""
    questions: int = 0
    problems: tuple[PackProblem, ...] = ()


def author_keys(text: str | None, prefix: str = "tg:") -> frozenset[str]:
    """QUIZBOT_AUTHORS ("123, 456" or "tg:123") as person keys."""
    keys = (w if ":" in w else prefix + w for w in re.split(r"[,\s]+", text or "") if w)
    return frozenset(keys)


PACK_ID = re.compile(rf"[a-z0-9][a-z0-9-]{{2,{ID_LENGTH - 1}}}")
# the scripts of the bot's languages besides English, as indic-transliteration names them
_SCRIPTS = (
    (re.compile("[\u0980-\u09ff]"), "bengali"),
    (re.compile("[\u0900-\u097f]"), "devanagari"),
)


def pack_id(title: str) -> str | None:
    """A slug of the title, Bengali and Devanagari spelled in Latin letters; None when too few
    letters are left (another script, or symbols only): the author names the id then."""
    ascii_title = unicodedata.normalize("NFKD", _in_latin(title)).encode("ascii", "ignore")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.decode().lower()).strip("-")
    slug = slug[:ID_LENGTH].strip("-")
    return slug if len(slug) >= 3 else None


def _in_latin(text: str) -> str:
    """Bengali and Devanagari in IAST (its accents are dropped by the caller). A library that
    knows the scripts' inherent vowels and conjuncts ("মিশ্র নির্ভুলতা" → "miśra nirbhulatā"),
    where a letter-by-letter transliteration (unidecode, anyascii) drops the vowels ("misr
    nirbhulta"); loaded only for such a title."""
    scripts = [name for pattern, name in _SCRIPTS if pattern.search(text)]
    if not scripts:
        return text
    from indic_transliteration import sanscript

    for script in scripts:
        text = sanscript.transliterate(text, script, sanscript.IAST)
    return text


def picture_type(data: bytes) -> str:
    """The file type of a checked picture: "png" or "jpg"."""
    return "png" if data.startswith(b"\x89PNG") else "jpg"


def title_key(title: str) -> str:
    """A title as two titles are compared: case, width and spacing aside."""
    return " ".join(unicodedata.normalize("NFKC", title).casefold().split())


class Authoring:
    def __init__(
        self, catalog: Catalog, storage: DraftStore, clock: Clock, authors: Collection[str] = ()
    ) -> None:
        self.catalog = catalog
        self.storage = storage
        self.clock = clock
        self.authors = frozenset(authors)
        self._version: str | None = None  # of the packs this catalog holds (refresh())
        self._seen: set[str] = set()  # published ids already added or left out here
        self._added: set[str] = set()  # those added to the catalog
        # where published packs with pictures are written, for this process's life
        self._folders: tempfile.TemporaryDirectory[str] | None = None

    def may_author(self, person: Person) -> bool:
        return person.key in self.authors

    def _check(self, person: Person) -> None:
        if not self.may_author(person):
            raise errors.not_an_author(person.key)

    def _check_title(self, title: str) -> None:
        """Refused if a quiz offered here (bundled or published) has this title in any
        language."""
        key = title_key(title)
        for quiz in self.catalog:
            if any(title_key(text) == key for _, text in quiz.title.items()):
                raise errors.title_taken(title, quiz.id)

    async def _draft(self, person: Person) -> DraftRecord:
        self._check(person)
        draft = await self.storage.get_draft(person.key)
        if draft is None:
            raise errors.no_draft()
        return draft

    # the draft ---------------------------------------------------------------------------
    async def start(self, person: Person, locale: str) -> tuple[bool, int]:
        """/newpack: (started, questions of the draft that was already open)."""
        self._check(person)
        if await self.storage.create_draft(person.key, locale, self.clock.now()):
            return True, 0
        draft = await self.storage.get_draft(person.key)
        return False, len(draft.questions) if draft else 0

    async def photo(self, person: Person, locale: str, size: int | None,
                    fetch: Callable[[], Awaitable[bytes]]) -> None:
        """A picture sent by `person` (`size` bytes, if the platform says; `fetch` downloads
        it): kept in their draft (started in `locale` if they have none) for the next poll,
        once it passes a pack image's checks."""
        self._check(person)
        cap = limits.IMAGE_BYTES
        if size is not None and size > cap:
            raise errors.picture_too_big(cap // 2**20)
        data = await fetch()
        if len(data) > cap:
            raise errors.picture_too_big(cap // 2**20)
        try:
            await asyncio.to_thread(media.check_raster, data)  # decoding: off the event loop
        except media.ImageTooLarge:
            raise errors.picture_too_big(cap // 2**20) from None
        except media.BadImage:
            raise errors.not_a_picture() from None
        await self.storage.set_draft_photo(person.key, locale, data, self.clock.now())

    async def add(self, person: Person, locale: str, sent: PollQuestion | WrittenQuestion,
                  ref: str) -> Added:
        """A poll or a form sent by `person`: stored as the next question of their draft
        (started in `locale` if they have none), with the photo waiting there. `ref` names
        the message: sent again, it adds nothing. A form is checked whole before it is
        stored: one with a problem is refused (Added.number None) and nothing changes."""
        self._check(person)
        before = await self.storage.get_draft(person.key)
        photo = before.photo if before is not None else None
        if isinstance(sent, WrittenQuestion):
            found = read(sent)
            if isinstance(found, list):
                return Added(None, tuple(PackProblem(None, "", None, template, values)
                                         for template, values in found))
            fields = found
        else:
            fields = _poll_fields(sent)
        question = json.dumps({
            **fields,
            **({"image": base64.b64encode(photo).decode("ascii")} if photo else {}),
        }, ensure_ascii=False)
        if isinstance(sent, WrittenQuestion):
            # the validator's limits too (lengths, the picture) before anything is stored
            draft = before or DraftRecord(person.key, locale, None, self.clock.now())
            number = len(draft.questions) + 1
            problems = self._problems_of(replace(draft, questions=(*draft.questions, question)),
                                         person, number)
            if problems:
                return Added(None, problems)
        number = await self.storage.add_draft_question(person.key, locale, question, ref,
                                                       self.clock.now())
        if isinstance(sent, WrittenQuestion):
            return Added(number)
        after = await self.storage.get_draft(person.key)
        problems = ()
        if after is not None and number <= len(after.questions):
            # this question alone, so the author can /undo it at once
            problems = self._problems_of(after, person, number)
        return Added(number, problems)

    @staticmethod
    def _problems_of(draft: DraftRecord, person: Person, number: int) -> tuple[PackProblem, ...]:
        """What would stop question `number` of `draft` being published."""
        from bot.content.pack_writer import check_pack

        source, files = _source(draft, "draft", [number])
        found = check_pack(source, _header(person), files)[1]
        return tuple(p for p in _problems(found) if p.question == number)

    async def view(self, person: Person) -> DraftView:
        draft = await self._draft(person)
        questions = [json.loads(q) for q in draft.questions]
        return DraftView(draft.title, draft.locale, tuple(q["prompt"] for q in questions),
                         tuple("image" in q for q in questions), draft.photo is not None,
                         tuple(q.get("kind", "choice") for q in questions))

    async def undo(self, person: Person) -> tuple[int | None, int]:
        """(the number of the question removed or None, questions left)."""
        await self._draft(person)
        removed = await self.storage.undo_draft_question(person.key)
        draft = await self.storage.get_draft(person.key)
        return removed, len(draft.questions) if draft else 0

    async def name(self, person: Person, title: str) -> str:
        await self._draft(person)
        title = " ".join(title.split())
        if not title:
            raise errors.untitled_draft()
        self._check_title(title)
        await self.storage.name_draft(person.key, title)
        return title

    async def discard(self, person: Person) -> bool:
        self._check(person)
        return await self.storage.delete_draft(person.key)

    # publishing --------------------------------------------------------------------------
    async def publish(self, person: Person, wanted_id: str | None = None) -> Published:
        """`wanted_id`: the id the author gives (`/publish <id>`); else one from the title."""
        draft = await self._draft(person)
        if not draft.questions:
            raise errors.empty_draft()
        if not draft.title:
            raise errors.untitled_draft()
        self._check_title(draft.title)  # another pack may have taken it since /name
        if wanted_id:
            quiz_id = wanted_id.strip().lower()
            if not PACK_ID.fullmatch(quiz_id):
                raise errors.bad_pack_id(wanted_id)
        elif (made := pack_id(draft.title)) is not None:
            quiz_id = made
        else:
            raise errors.pack_id_needed()
        if quiz_id in self.catalog.quizzes:  # withdrawn ones too: their answers keep the id
            raise errors.pack_exists(quiz_id)
        from bot.content.pack_writer import check_pack, load_pack

        source, files = _source(draft, quiz_id)
        imported, found = check_pack(source, _header(person), files)
        if imported is None:
            return Published(None, draft.title, len(draft.questions), tuple(_problems(found)))
        quiz = load_pack(imported.text, files, self._folder(quiz_id, files))[0]
        assert quiz is not None  # the same text just validated
        taken = {q.id for other in self.catalog.quizzes.values() for q in other.questions}
        if any(q.id in taken for q in quiz.questions):
            raise errors.pack_exists(quiz_id)
        record = AuthoredPackRecord(quiz_id, person.key, imported.text, self.clock.now(),
                                    files=tuple(files))
        if not await self.storage.publish_draft(record):
            raise errors.pack_exists(quiz_id)
        self.catalog.quizzes[quiz.id] = quiz
        self._seen.add(quiz.id)
        self._added.add(quiz.id)
        log.info("%s published quiz %s (%d questions)", person.key, quiz.id, len(quiz.questions))
        return Published(quiz.id, draft.title, len(quiz.questions))

    async def unpublish(self, person: Person, quiz_id: str) -> str:
        """Withdraw a pack its author published: the title it had."""
        self._check(person)
        quiz_id = quiz_id.strip().lower()
        if not quiz_id:
            raise errors.unpublish_what()
        record = next((r for r in await self.storage.authored_packs()
                       if r.quiz_id == quiz_id and r.withdrawn_at is None), None)
        quiz = self.catalog.get(quiz_id)
        if record is None or quiz is None:
            raise errors.not_published_here(quiz_id)
        if record.author_key != person.key:
            raise errors.not_your_pack(quiz_id)
        if not await self.storage.withdraw_pack(quiz_id, self.clock.now()):
            raise errors.not_published_here(quiz_id)  # another process withdrew it just now
        self.catalog.withdrawn.add(quiz_id)
        log.info("%s withdrew quiz %s", person.key, quiz_id)
        return quiz.title.get(quiz.language or "en")

    async def load(self) -> int:
        """Add every published pack to the catalog (at start), a withdrawn one as withdrawn;
        one that is no longer valid, or whose id a bundled pack took meanwhile, is left out
        with a warning. The number offered."""
        await self.refresh()
        return sum(1 for quiz_id in self._added if quiz_id not in self.catalog.withdrawn)

    async def refresh(self) -> bool:
        """Catch up with packs published or withdrawn by any process since the last look:
        whether anything changed. One cheap read when nothing did."""
        version = await self.storage.authored_packs_version()
        if version == self._version:
            return False
        changed = False
        for record in await self.storage.authored_packs():
            if record.quiz_id not in self._seen:
                changed |= self._add(record)
            if (record.withdrawn_at is not None and record.quiz_id in self._added
                    and record.quiz_id not in self.catalog.withdrawn):
                self.catalog.withdrawn.add(record.quiz_id)
                changed = True
        self._version = version
        return changed

    def _add(self, record: AuthoredPackRecord) -> bool:
        self._seen.add(record.quiz_id)
        if record.quiz_id in self.catalog.quizzes:
            log.warning("published quiz %s left out: the catalog has a quiz with its id",
                        record.quiz_id)
            return False
        from bot.content.pack_writer import load_pack

        quiz, problems = load_pack(record.text, record.files,
                                   self._folder(record.quiz_id, record.files))
        if quiz is None:
            log.warning("published quiz %s left out: %s", record.quiz_id,
                        "; ".join(p.message for p in problems if not p.warning))
            return False
        if record.withdrawn_at is not None:
            self.catalog.withdrawn.add(quiz.id)
        self.catalog.quizzes[quiz.id] = quiz
        self._added.add(quiz.id)
        return True


    def _folder(self, quiz_id: str, files: Files) -> Path | None:
        """Where a published pack with pictures is written (a folder of this process's, gone
        when it ends; its card is kept by content in the card cache); None without any."""
        if not files:
            return None
        if self._folders is None:
            self._folders = tempfile.TemporaryDirectory(prefix="quizbot-authored-")
        return Path(self._folders.name) / quiz_id


def _header(person: Person) -> tuple[str, ...]:
    """The pack's first line. Who wrote it is the record's author_key, which /mydata delete
    clears: a key in the text would outlive it (bot/storage/privacy.py removes the one older
    packs carry)."""
    return ("# Written in a chat (quiz polls, published with /publish).",)


def _poll_fields(poll: PollQuestion) -> dict[str, object]:
    """A quiz poll's question as a draft stores it: one right option, or several (multi,
    refused here when the validator would refuse it: nothing is stored then)."""
    if not poll.quiz:
        raise errors.not_a_quiz()
    if not poll.correct:
        raise errors.no_right_option()
    fields: dict[str, object] = {
        "prompt": poll.prompt, "options": list(poll.options), "answer": poll.correct[0],
        "explanation": poll.explanation or None,
    }
    if len(poll.correct) > 1:
        if len(poll.options) < 3 or len(set(poll.correct)) == len(poll.options):
            raise errors.AuthoringError(_(
                "A question with several right answers needs at least three options and at "
                "least one wrong one."))
        fields |= {"kind": "multi", "answers": sorted(set(poll.correct))}
    return fields


def _source(draft: DraftRecord, quiz_id: str,
            only: Sequence[int] = ()) -> tuple[PackSource, list[tuple[str, bytes]]]:
    """The draft as a pack to validate (only the questions numbered `only`, if given), and
    its pictures by the path the pack names them with."""
    from bot.content.pack_writer import PackSource, QuestionSource

    locale = draft.locale
    questions = []
    files = []
    for number, text in enumerate(draft.questions, start=1):
        if only and number not in only:
            continue
        q = json.loads(text)
        explanation = {locale: q["explanation"]} if q.get("explanation") else {}
        image = None
        if q.get("image"):
            data = base64.b64decode(q["image"])
            image = f"images/{quiz_id}-{number}.{picture_type(data)}"
            files.append((image, data))
        numeric, unit, accept = q.get("numeric"), q.get("unit"), q.get("accept")
        questions.append(QuestionSource(
            row=number, id=f"{quiz_id}-{number}",
            texts={"prompt": {locale: q["prompt"]}, "explanation": explanation, "details": {}},
            options=[{locale: o} for o in q.get("options", [])], answer=int(q.get("answer", -1)),
            image=image, kind=q.get("kind", "choice"), answers=tuple(q.get("answers", ())),
            truth=q.get("truth"), numeric=numeric, unit={locale: unit} if unit else None,
            accept={locale: accept} if accept is not None else None, latin=q.get("latin", []),
        ))
    source = PackSource(row=0, id=quiz_id, title={locale: draft.title or quiz_id}, tags=[],
                        questions=questions, language=locale)
    return source, files


# the loader's messages as problems the author reads in their language ----------------------
_WHERE = re.compile(
    r"(?:question (?P<question>\d+)\.?)?(?P<field>title|prompt|explanation|options|"
    r"option (?P<option>\d+))?(?:\.(?:en|bn|hi))?(?P<rest>.*)", re.S,
)
_WHAT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r": \w+ is (?P<length>\d+) characters, the limit is (?P<limit>\d+)"),
     _("{length} characters, at most {limit}")),
    (re.compile(r": explanation has (?P<count>\d+) line breaks, Telegram allows (?P<limit>\d+)"),
     _("{count} line breaks, at most {limit}")),
    (re.compile(r" is missing"), _("missing")),
    (re.compile(r" is empty"), _("empty")),
    (re.compile(r" has (?P<count>\d+), at most (?P<limit>\d+) allowed"),
     _("{count} options, at most {limit}")),
    (re.compile(r" has (?P<count>\d+), at least (?P<limit>\d+) needed"),
     _("{count} options, at least {limit}")),
    (re.compile(r": contains the unprintable character (?P<code>U\+[0-9A-F]+)"),
     _("contains the unprintable character {code}")),
)
_FIELDS = {"prompt": "question"}


def _problems(found: Sequence[tuple[int, Problem]]) -> list[PackProblem]:
    problems = []
    for row, problem in found:
        if problem.warning:
            continue
        where = _WHERE.fullmatch(problem.message)
        assert where is not None  # every part of the pattern is optional
        field_name = where["field"] or ""
        option = int(where["option"]) if where["option"] else None
        if option is not None:
            field_name = "option"
        rest = where["rest"]
        for pattern, template in _WHAT:
            if (what := pattern.match(rest)) is not None:
                problems.append(PackProblem(row or None, _FIELDS.get(field_name, field_name),
                                            option, template, dict(what.groupdict())))
                break
        else:  # a problem these words do not cover: the validator's own (English) sentence
            problems.append(PackProblem(row or None, "", None, "{text}",
                                        {"text": problem.message}))
    return problems


# texts ---------------------------------------------------------------------------------------
def _field_text(problem: PackProblem, t: Translator) -> str:
    if problem.part == "option" and problem.option is not None:
        return t.gettext("option {number}", number=problem.option)
    names = {
        "title": _("title"), "question": _("question"), "options": _("options"),
        "explanation": _("explanation"),
    }
    return t.gettext(names[problem.part]) if problem.part in names else ""


def problem_text(problem: PackProblem, t: Translator) -> str:
    what = t.gettext(problem.template, **problem.values)
    where = _field_text(problem, t)
    if problem.question is None:
        return f"{where}: {what}" if where else what
    if where:
        return t.gettext("Question {number}, {field}: {problem}", number=problem.question,
                         field=where, problem=what)
    return t.gettext("Question {number}: {problem}", number=problem.question, problem=what)


def added_text(added: Added, t: Translator) -> str:
    if added.number is None:
        return "\n".join([
            t.gettext("Not added; nothing changed. Fix these and send it again:"),
            *(f"• {problem_text(p, t)}" for p in added.problems)])
    lines = [t.gettext("Question {number} added to your draft.", number=t.number(added.number))]
    if added.problems:
        lines.append(t.gettext("It cannot be published as it is:"))
        lines += [f"• {problem_text(p, t)}" for p in added.problems]
        lines.append(t.gettext("/undo removes it; then send it again."))
    else:
        lines.append(t.gettext("Send the next one, or /name the draft and /publish it."))
    return "\n".join(lines)


def draft_text(view: DraftView, t: Translator) -> str:
    title = view.title or t.gettext("(no title yet: /name followed by the title)")
    lines = [
        t.gettext("Your draft: {title}", title=title),
        t.gettext("Language: {name}. Questions: {count}.", name=LANGUAGE_NAMES[view.locale],
                  count=t.number(len(view.prompts))),
    ]
    pictures = view.pictures or (False,) * len(view.prompts)
    kinds = view.kinds or ("choice",) * len(view.prompts)
    for number, (prompt, picture, kind) in enumerate(
            zip(view.prompts, pictures, kinds, strict=True), start=1):
        short = prompt if len(prompt) <= SHOWN_PROMPT else prompt[: SHOWN_PROMPT - 1] + "…"
        label = f"[{t.gettext(KIND_NAMES[kind])}] " if kind in KIND_NAMES else ""
        lines.append(f"{number}. {'🖼 ' if picture else ''}{label}{short}")
    if view.photo_waiting:
        lines.append(t.gettext("A photo is waiting: it goes with the next quiz poll you send."))
    lines.append(t.gettext("/undo removes the last question, /publish publishes it, "
                           "/discard drops it."))
    return "\n".join(lines)


# how /draft names a question of a kind other than choice
KIND_NAMES = {
    "multi": _("several right"), "truefalse": _("true/false"), "numeric": _("number"),
    "text": _("typed"), "order": _("order"),
}


def photo_kept_text(t: Translator) -> str:
    return t.gettext("Photo kept: it becomes the picture of the next quiz poll you send "
                     "(a photo sent before that replaces it).")


def published_text(result: Published, t: Translator) -> str:
    if result.quiz_id is not None:
        return t.gettext(
            "Published “{title}” (questions: {count}). Ask it in any chat with /quiz {id}",
            title=result.title, count=t.number(result.questions), id=result.quiz_id)
    lines = [t.gettext("Your draft was not published; nothing changed. Fix these, with /undo "
                       "and sending the question again:")]
    lines += [f"• {problem_text(p, t)}" for p in result.problems]
    return "\n".join(lines)


def unpublished_text(quiz_id: str, title: str, t: Translator) -> str:
    return t.gettext(
        "“{title}” ({id}) is withdrawn: it is no longer offered. Its answers and boards stay.",
        title=title, id=quiz_id)


def whoami_text(person: Person, author: bool, t: Translator) -> str:
    """/whoami: the id an operator puts in QUIZBOT_AUTHORS, and whether it is there."""
    lines = [t.gettext("Your id: {id}", id=errors.author_entry(person.key))]
    if author:
        lines.append(t.gettext("You are one of the bot's authors: send me quiz polls in a "
                               "private chat to write a quiz."))
    else:
        # i18n: QUIZBOT_AUTHORS is a setting's name: keep it as it is
        lines.append(t.gettext("To write quizzes here, ask the bot's operator to add it to "
                               "QUIZBOT_AUTHORS."))
    return "\n".join(lines)


def help_text(t: Translator) -> str:
    return t.gettext(
        "Writing a quiz: send me quiz polls here, one per question (with the right answer "
        "and an explanation). /draft shows your draft, /undo removes the last question, "
        "/name <title> names it, /publish publishes it (/publish <id> with an id you choose), "
        "/discard drops it, /unpublish <id> withdraws a quiz you published.") + "\n" + \
        t.gettext("A photo sent just before a quiz poll becomes that question's picture.") + \
        "\n" + t.gettext("A quiz poll with several right options is a select-all question. "
                         "Other kinds (true/false, a number, a typed answer, an order): "
                         "/question shows their forms.")

"""Question banks (Aiken, GIFT, Moodle XML) read into quiz packs.

Each format's reader turns a file into `Item`s, one per multiple-choice or true/false
question, each with the line it starts on; what it cannot take (an essay, a matching
question) is reported as skipped at its line, a malformed question as an error. The items
become one pack per category (`$CATEGORY` in GIFT, a category question in Moodle XML; else
one pack named after the file), written in one language (`--lang`) and validated like a
spreadsheet's packs (bot/content/pack_writer.py: every problem at its line, in one run,
nothing written on an error).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Protocol

from bot.content import limits
from bot.content.files import Unreadable, read_regular
from bot.content.pack_writer import (
    Imported,
    PackError,
    PackSource,
    QuestionSource,
    RowProblem,
    finish_import,
)

BANK_FILE_BYTES = 8 * 1024 * 1024  # as a spreadsheet
SLUG_CHARS = 48  # schema.Slug

BankImportError = PackError  # the importers' one validation error


class Report(Protocol):
    def __call__(self, line: int, message: str, warning: bool = False) -> None: ...


@dataclass
class Item:
    """One question read from a bank, of a kind a pack has (docs/content.md)."""

    line: int
    prompt: str
    options: list[str]  # none: true/false, numeric, text; order: in the right order
    answer: int  # 0-based (true/false: 0 true, 1 false); -1 for numeric, text and order
    feedback: str = ""  # the general feedback (or the right answer's): the explanation
    name: str = ""  # the bank's name for it (GIFT `::title::`, Moodle `<name>`): its id
    category: str = ""  # its pack
    media: Media | None = None  # code, a formula, a picture shown with the prompt (HTML)
    kind: str = "choice"  # items.Kind's value
    answers: tuple[int, ...] = ()  # multi: every right option
    numeric: dict[str, float] | None = None  # {"value", "tolerance"} or {"value", "min", "max"}
    unit: str | None = None  # numeric
    accept: list[str] = field(default_factory=list)  # text: the accepted forms

    def key_text(self) -> str:
        """The right answer as a reader would write it (an explanation made up of it)."""
        if self.kind == "truefalse":
            return ("True", "False")[self.answer]
        if self.kind == "multi":
            return ", ".join(self.options[i] for i in self.answers if i < len(self.options))
        if self.kind == "order":
            return " → ".join(self.options)
        if self.kind == "text":
            return self.accept[0] if self.accept else ""
        if self.kind == "numeric" and self.numeric is not None:
            return f"{self.numeric['value']:g}" + (f" {self.unit}" if self.unit else "")
        return self.options[self.answer] if 0 <= self.answer < len(self.options) else ""


@dataclass
class Media:
    """What an HTML prompt shows beside its text, as a pack has it (schema.QuestionModel)."""

    code: tuple[str, str] | None = None  # (Pygments language, text)
    formula: str | None = None
    image: tuple[str, bytes] | None = None  # (file name, bytes)
    image_alt: str | None = None  # the <img>'s alt text


Reader = Callable[[bytes, Report], list[Item]]


def text_of(data: bytes, report: Report) -> str | None:
    """UTF-8 text (a BOM allowed); None, reported at the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        report(line, "the file is not UTF-8 text (save it as UTF-8)")
        return None


def share(n: int) -> str:
    """100/n as Moodle writes a fraction (33.33333 for a third): each right option's credit
    in a select-all of n right options, or each wrong one's penalty, in GIFT and Moodle XML."""
    return f"{100 / n:.5f}".rstrip("0").rstrip(".")


def keys_of(credit: Sequence[float], line: int, report: Report,
            mark: str) -> tuple[int, ...] | None:
    """The right answers among answers earning `credit` (percent): the one at 100%, or the
    answers that together earn it (a multiple-answer question: a multi, scored all or
    nothing); partial credit beside one full answer is dropped with a warning. `mark`: how the
    format marks the right answer, for the message."""
    positive = [i for i, c in enumerate(credit) if 0 < c < 100]
    full = [i for i, c in enumerate(credit) if c >= 100]
    if not full and len(positive) >= 2 and sum(credit[i] for i in positive) >= 99:
        if len(positive) == len(credit):
            report(line, "every answer earns credit: a select-all question needs a wrong one")
            return None
        return tuple(positive)
    key = key_of(credit, line, report, mark)
    return None if key is None else (key,)


def key_of(credit: Sequence[float], line: int, report: Report, mark: str) -> int | None:
    """The right answer among answers earning `credit` (percent): the one at 100%. Several
    answers at 100% (any of them right), or partial credit that does not add up to a whole
    (a multiple-answer question scored in parts), are refused; partial credit beside one
    full answer is dropped with a warning. `mark`: how the format marks the right answer, for
    the message."""
    full = [i for i, c in enumerate(credit) if c >= 100]
    partial = [(i, c) for i, c in enumerate(credit) if 0 < c < 100]
    if len(full) > 1 or (partial and not full):
        shares = ", ".join(f"{c:g}%" for c in credit if c > 0)
        report(line, f"a multiple-answer question ({len(full) + len(partial)} answers earn "
               f"credit: {shares}); quizbot keys one right answer, or several that together "
               f"earn 100% (select all that apply): {mark}")
        return None
    if not full:
        report(line, f"no right answer: {mark}")
        return None
    if partial:
        dropped = ", ".join(f"answer {i + 1} {c:g}%" for i, c in partial)
        report(line, f"partial credit dropped ({dropped}): only the answer at 100% is right",
               warning=True)
    return full[0]


# --- HTML (Moodle's usual text format) to plain text -------------------------------------------

_BREAKS = {"br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag == "img":
            alt = dict(attrs).get("alt")
            self.parts.append(f"[{alt}]" if alt else "[image]")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BREAKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(re.sub(r"\s+", " ", data))


def html_text(html: str) -> str:
    """The text a reader sees in an HTML fragment: tags dropped, breaks kept."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = (line.strip() for line in "".join(parser.parts).split("\n"))
    return re.sub(r"\n{2,}", "\n", "\n".join(line for line in lines)).strip()


# --- code, formulas and pictures in HTML (what the exports write, bot/content/formats/media.py)

_PRE = re.compile(r"<pre\b[^>]*>(.*?)</pre\s*>", re.IGNORECASE | re.DOTALL)
_LANGUAGE = re.compile(r"""class\s*=\s*["'][^"']*\blanguage-([\w+#.-]+)""", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
# display math, a paragraph of its own (as the exports write it): "$$" inside a sentence is text
_FORMULA = re.compile(r"<p>\s*(?:\$\$(.+?)\$\$|\\\((.+?)\\\)|\\\[(.+?)\\\])\s*</p>",
                      re.DOTALL | re.IGNORECASE)
_ALT = re.compile(r'\balt\s*=\s*"([^"]*)"', re.IGNORECASE)
_PLUGIN_IMG = re.compile(
    r"""<img\b[^>]*\bsrc\s*=\s*["']@@PLUGINFILE@@/([^"']+)["'][^>]*>""", re.IGNORECASE)


def html_media(html: str, files: dict[str, bytes] | None = None) -> tuple[str, Media | None]:
    """An HTML prompt's first code block (`<pre>`, its language from a `language-X` class),
    first formula (a paragraph of `$$…$$`, `\\(…\\)` or `\\[…\\]` that mathtext draws) and
    first picture among `files` (an `<img>` of `@@PLUGINFILE@@/name`, Moodle's reference to
    a file embedded in the question), and the HTML without them."""
    from html import unescape
    from urllib.parse import unquote

    media = Media()
    if pre := _PRE.search(html):
        language = _LANGUAGE.search(pre.group(0))
        code = unescape(_TAG.sub("", pre.group(1))).strip("\n")
        if code.strip():
            media.code = (language.group(1).lower() if language else "text", code)
            html = html[: pre.start()] + html[pre.end():]
    if formula := _FORMULA.search(html):
        tex = unescape(next(g for g in formula.groups() if g is not None)).strip()
        if tex and _draws(tex):  # else text that happens to hold "$$" stays text
            media.formula = tex
            html = html[: formula.start()] + html[formula.end():]
    for img in _PLUGIN_IMG.finditer(html):
        name = unquote(img.group(1))
        if files and name in files:
            media.image = (name, files[name])
            if (alt := _ALT.search(img.group(0))) and unescape(alt.group(1)).strip():
                media.image_alt = unescape(alt.group(1)).strip()
            html = html[: img.start()] + html[img.end():]
            break
    found = media.code is not None or media.formula is not None or media.image is not None
    return html, media if found else None


def _draws(tex: str) -> bool:
    from bot.content.mathtext import MathError, check

    try:
        check(tex)
    except MathError:
        return False
    return True


# --- items to packs --------------------------------------------------------------------------


def slug(text: str) -> str:
    """Lowercase letters, digits and hyphens (schema.Slug); "" when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:SLUG_CHARS].strip("-")


def _unique(wanted: str, taken: set[str]) -> str:
    n, name = 1, wanted
    while name in taken:
        n += 1
        name = f"{wanted[: SLUG_CHARS - len(str(n)) - 1].rstrip('-')}-{n}"
    taken.add(name)
    return name


def _explanation(item: Item) -> tuple[str, str, bool]:
    """(explanation, details, made up): feedback too long for a poll's explanation goes to
    the details, and a question without any is explained by its answer."""
    feedback = item.feedback.strip()
    fits = (limits.tg_len(feedback) <= limits.TG_EXPLANATION
            and feedback.count("\n") <= limits.TG_EXPLANATION_NEWLINES)
    if feedback and fits:
        return feedback, "", False
    return f"✅ {' '.join(item.key_text().split())}", feedback, True


@dataclass
class _Packs:
    language: str
    stem: str
    quizzes: dict[str, PackSource] = field(default_factory=dict)
    quiz_ids: set[str] = field(default_factory=set)
    question_ids: set[str] = field(default_factory=set)
    made_up: list[int] = field(default_factory=list)  # lines of questions without feedback

    def quiz(self, item: Item) -> PackSource:
        title = item.category.rstrip("/").rsplit("/", 1)[-1].strip() or self.stem
        quiz = self.quizzes.get(title)
        if quiz is None:
            quiz_id = _unique(slug(title) or slug(self.stem) or "imported", self.quiz_ids)
            quiz = PackSource(row=item.line, id=quiz_id, title={self.language: title},
                              tags=[], language=self.language)
            self.quizzes[title] = quiz
        return quiz

    def add(self, item: Item) -> None:
        quiz = self.quiz(item)
        wanted = slug(item.name) or f"{quiz.id[: SLUG_CHARS - 4]}-{len(quiz.questions) + 1}"
        explanation, details, made_up = _explanation(item)
        if made_up:
            self.made_up.append(item.line)
        lang = self.language
        texts = {"prompt": {lang: item.prompt}, "explanation": {lang: explanation},
                 "details": {lang: details} if details else {}}
        question = QuestionSource(
            item.line, _unique(wanted, self.question_ids), texts,
            [{lang: option} for option in item.options], item.answer, kind=item.kind,
            answers=item.answers,
            truth=item.answer == 0 if item.kind == "truefalse" else None,
            numeric=item.numeric, unit={lang: item.unit} if item.unit else None,
            accept={lang: item.accept} if item.kind == "text" else None)
        if (media := item.media) is not None:
            question.code, question.formula = media.code, media.formula
            if media.image is not None:  # beside the pack, named after its question
                name, data = media.image
                question.image = f"images/{question.id}{Path(name).suffix.lower()}"
                question.image_alt = {lang: media.image_alt} if media.image_alt else None
                quiz.files.append((question.image, data))
        quiz.questions.append(question)


def header(format_name: str, source: str) -> Callable[[PackSource], Sequence[str]]:
    def lines(quiz: PackSource) -> Sequence[str]:
        return (f"# Written by `quizbot content import {format_name}` from {source}.",
                "# Edit the question bank and import it again (a file without this first "
                "line is not replaced).")
    return lines


def import_bank(
    reader: Reader, format_name: str, path: Path, out: Path, language: str = "en",
    force: bool = False,
) -> tuple[list[Imported], list[RowProblem]]:
    """The packs a question bank makes and its warnings; BankImportError with every problem
    (and the warnings) if any is an error. Nothing is written here: pack_writer.write()."""
    problems: list[RowProblem] = []
    name = str(path)

    def report(line: int, message: str, warning: bool = False) -> None:
        problems.append(RowProblem(name, line, message, warning))

    items: list[Item] = []
    try:
        data = read_regular(path, BANK_FILE_BYTES, what="a question bank", too_big=(
            f"the file is larger than {BANK_FILE_BYTES // 2**20} MiB; split it"))
    except Unreadable as exc:
        report(1, str(exc))
    else:
        items = reader(data, report)
    packs = _Packs(language, path.stem)
    for item in items:
        packs.add(item)
    if packs.made_up:
        lines = ", ".join(map(str, packs.made_up[:10])) + (", …" if len(packs.made_up) > 10
                                                            else "")
        report(packs.made_up[0], f"{len(packs.made_up)} question(s) without feedback short "
               f"enough for an explanation (lines {lines}): their explanation is the right "
               "answer (✅ …); longer feedback is kept as the details", warning=True)
    if not items and not any(not p.warning for p in problems):
        report(1, f"no multiple-choice or true/false question found in this {format_name} file")
    source = re.sub("[\x00-\x1f\x7f-\x9f\u2028\u2029]", "?", path.name)
    return finish_import(list(packs.quizzes.values()), problems, name, out, force,
                         header(format_name, source), where="line")

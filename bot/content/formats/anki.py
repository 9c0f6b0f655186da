"""Anki decks (.apkg) through genanki: one note per question, one deck per language.

A note's front is the prompt and its lettered options, its back the right answer and the
explanation (per kind: every right option of a select-all; an order's items lettered out of
order on the front, the right sequence on the back; a number with its tolerance or range;
the accepted forms of a typed answer); a question's code, formula and picture are in the
prompt's field (the picture a media file of the package). Its GUID comes from the question
id and the language, and the note type and the decks have fixed ids, so importing a newer
export into Anki updates the notes it has instead of adding copies. Used by `quizbot content
export --format anki` (every question) and by /review export (a person's due and missed cards).
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import json
import sqlite3
import time
import zipfile
from collections.abc import Iterable, Sequence

import genanki

from bot.content.formats.media import picture, prompt_html
from bot.content.items import Kind, Question, Quiz

FIELDS = ("Prompt", "Options", "Answer", "Explanation", "Question id")
LETTERS = "ABCDEFGHIJ"

_MODEL = genanki.Model(
    1_607_392_319,  # fixed: Anki matches a note type by its id
    "quizbot question",
    fields=[{"name": name} for name in FIELDS],
    templates=[{
        "name": "Question",
        "qfmt": '<div class="prompt">{{Prompt}}</div><div class="options">{{Options}}</div>',
        "afmt": '{{FrontSide}}<hr id="answer"><div class="answer">{{Answer}}</div>'
                '<div class="explanation">{{Explanation}}</div>',
    }],
    css=".card { font-family: sans-serif; font-size: 20px; text-align: left; }\n"
        ".options { margin-top: 1em; }\n.answer { font-weight: bold; }\n"
        ".explanation { margin-top: 1em; }\n",
    sort_field_index=4,
)


def _id(name: str) -> int:
    """A stable id in the range genanki recommends (Anki matches decks by id)."""
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
    return (1 << 30) + digest % (1 << 30)


def _html(text: str) -> str:
    return html.escape(text, quote=False).replace("\n", "<br>")


class Media(dict[str, bytes]):
    """A deck's media files by name (pictures the notes show)."""


def note(question: Question, language: str, tags: Sequence[str] = (),
         quiz: Quiz | None = None, media: Media | None = None) -> genanki.Note:
    """One question as a note in `language` (a text it lacks falls back as the bot's does).
    Its code and formula (`\\[…\\]`, Anki's MathJax) are in the prompt's field, and its
    picture (found through `quiz`'s folder) too, the file added to `media`."""
    lettered, answer = _key(question, language)
    prompt = _html(question.prompt.get(language))
    if question.has_media:
        found = picture(quiz, question, language) if quiz is not None else None
        if found is not None and media is not None:
            media[found.name] = found.data
        prompt = prompt_html(question, language, formula=("\\[", "\\]"),
                             src=found.name if found is not None and media is not None
                             else None)
    fields = [prompt, lettered, answer, _html(question.explanation.get(language)), question.id]
    return genanki.Note(model=_MODEL, fields=fields, guid=genanki.guid_for(question.id, language),
                        tags=list(tags))


def _key(question: Question, language: str) -> tuple[str, str]:
    """The front's options and the back's answer of a question, by its kind: the lettered
    options and the right one(s); an order's items lettered out of order and the right
    sequence; a number's value with its tolerance or range; a typed answer's accepted
    forms."""
    options = [o.text.get(language) for o in question.options]
    kind = question.kind
    if kind is Kind.ORDER:  # shown reversed (never in the right order), answered in order
        shown = list(reversed(range(len(options))))
        lettered = "<br>".join(f"{LETTERS[n]}. {_html(options[i])}" for n, i in enumerate(shown))
        sequence = [f"{LETTERS[shown.index(i)]}. {_html(options[i])}"
                    for i in range(len(options))]
        return lettered, " → ".join(sequence)
    if kind is Kind.NUMERIC and question.numeric is not None:
        n = question.numeric
        unit = f" {n.unit.get(language)}" if n.unit is not None else ""
        if n.low + n.high == 2 * n.value:
            return "", _html(f"{n.value:g}{unit} (±{n.high - n.value:.10g})")
        return "", _html(f"{n.value:g}{unit} ({n.low:g}–{n.high:g})")
    if kind is Kind.TEXT and question.accept is not None:
        return "", " / ".join(_html(form) for form in question.accept.forms(language))
    lettered = "<br>".join(f"{LETTERS[i]}. {_html(text)}" for i, text in enumerate(options))
    return lettered, "<br>".join(f"{LETTERS[i]}. {_html(options[i])}" for i in question.answers)


def deck(name: str, notes: Iterable[genanki.Note]) -> genanki.Deck:
    built = genanki.Deck(_id(f"quizbot deck {name}"), name)
    for n in notes:
        built.add_note(n)
    return built


def quiz_decks(quizzes: Sequence[Quiz], languages: Sequence[str],
               media: Media | None = None) -> list[genanki.Deck]:
    """One deck per language holding every question, tagged with its quiz's id."""
    return [deck(f"quizbot ({language})",
                 (note(q, language, [quiz.id], quiz, media)
                  for quiz in quizzes for q in quiz.questions))
            for language in languages]


def package(decks: Sequence[genanki.Deck], timestamp: float | None = None,
            media: Media | None = None) -> bytes:
    """The .apkg file's bytes, with the `media` files the notes show.

    genanki's own write_to_file builds the collection in a temporary file that it leaves
    behind, one fsync per statement of its schema; the same collection is built here in
    memory and serialized into the zip (media as Anki packs them: files named 0, 1, … and
    a `media` map of those names to the file names).
    """
    when = time.time() if timestamp is None else timestamp
    connection = sqlite3.connect(":memory:")
    try:
        genanki.Package(list(decks)).write_to_db(connection.cursor(), when,
                                                 itertools.count(int(when * 1000)))
        connection.commit()
        collection = connection.serialize()
    finally:
        connection.close()
    out = io.BytesIO()
    files = sorted((media or {}).items())
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as apkg:
        apkg.writestr("collection.anki2", collection)
        for number, (_, data) in enumerate(files):
            apkg.writestr(str(number), data)
        apkg.writestr("media", json.dumps({str(n): name for n, (name, _) in enumerate(files)}))
    return out.getvalue()


def quiz_package(quizzes: Sequence[Quiz], languages: Sequence[str]) -> bytes:
    """`content export --format anki`: the decks and their pictures."""
    media = Media()
    return package(quiz_decks(quizzes, languages, media), media=media)


def review_deck(questions: Sequence[tuple[Quiz, Question]], language: str) -> bytes:
    """A person's cards to review, (quiz, question) each, as one deck in their language."""
    name = f"quizbot review ({language})"
    media = Media()
    return package([deck(name, (note(q, language, [quiz.id], quiz, media)
                                for quiz, q in questions))], media=media)

"""Anki decks (.apkg) through genanki: one note per question, one deck per language.

A note's front is the prompt and its lettered options, its back the right answer and the
explanation. Its GUID comes from the question id and the language, and the note type and
the decks have fixed ids, so importing a newer export into Anki updates the notes it has
instead of adding copies. Used by `quizbot content export --format anki` (every question)
and by /review export (a person's due and missed cards).
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import sqlite3
import time
import zipfile
from collections.abc import Iterable, Sequence

import genanki

from bot.content.schema import Question, Quiz

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


def note(question: Question, language: str, tags: Sequence[str] = ()) -> genanki.Note:
    """One question as a note in `language` (a text it lacks falls back as the bot's does)."""
    options = [o.text.get(language) for o in question.options]
    lettered = "<br>".join(f"{LETTERS[i]}. {_html(text)}" for i, text in enumerate(options))
    answer = f"{LETTERS[question.answer]}. {_html(options[question.answer])}"
    fields = [_html(question.prompt.get(language)), lettered, answer,
              _html(question.explanation.get(language)), question.id]
    return genanki.Note(model=_MODEL, fields=fields, guid=genanki.guid_for(question.id, language),
                        tags=list(tags))


def deck(name: str, notes: Iterable[genanki.Note]) -> genanki.Deck:
    built = genanki.Deck(_id(f"quizbot deck {name}"), name)
    for n in notes:
        built.add_note(n)
    return built


def quiz_decks(quizzes: Sequence[Quiz], languages: Sequence[str]) -> list[genanki.Deck]:
    """One deck per language holding every question, tagged with its quiz's id."""
    return [deck(f"quizbot ({language})",
                 (note(q, language, [quiz.id]) for quiz in quizzes for q in quiz.questions))
            for language in languages]


def package(decks: Sequence[genanki.Deck], timestamp: float | None = None) -> bytes:
    """The .apkg file's bytes.

    genanki's own write_to_file builds the collection in a temporary file that it leaves
    behind, one fsync per statement of its schema; the same collection is built here in
    memory and serialized into the zip.
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
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as apkg:
        apkg.writestr("collection.anki2", collection)
        apkg.writestr("media", "{}")
    return out.getvalue()


def review_deck(questions: Sequence[tuple[str, Question]], language: str) -> bytes:
    """A person's cards to review, (quiz id, question) each, as one deck in their language."""
    name = f"quizbot review ({language})"
    return package([deck(name, (note(q, language, [quiz_id]) for quiz_id, q in questions))])

"""Fuzzed imports: whatever bytes a question bank holds, an importer either gives packs or
raises its validation error (BankImportError, every problem at a line), nothing else."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.content.formats import READERS, BankImportError, import_file
from bot.content.loader import load_file

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# pieces of each format, so that random files get deep into the parsers
_PIECES = {
    "aiken": ["A. ", "B) ", "C. ", "ANSWER: ", "ANSWER: B", "\n", "\n\n", "Q?", "x", " ",
              "অ", "क", "Z. "],
    "gift": ["::", "{", "}", "=", "~", "#", "####", "%50%", "%100%", "->", "\\", "\\:",
             "\\n", "$CATEGORY: a/b", "//", "\n", "\n\n", "T", "FALSE", "[html]", "<b>", "x",
             " ", "অ", "क"],
    "moodle-xml": ['<?xml version="1.0"?>', "<quiz>", "</quiz>", '<question type="multichoice">',
                   '<question type="truefalse">', '<question type="category">', "</question>",
                   "<name><text>", "</text></name>", '<questiontext format="html"><text>',
                   "</text></questiontext>", '<answer fraction="100"><text>',
                   '<answer fraction="0"><text>', '<answer fraction="50"><text>',
                   "</text></answer>", "<category><text>", "</text></category>",
                   "<generalfeedback><text>", "</text></generalfeedback>", "&lt;p&gt;",
                   "<![CDATA[<p>", "]]>", "&amp;", "<!DOCTYPE quiz>", "x", "true", " ", "অ",
                   "\n"],
}


def _import(fmt: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="quizbot-fuzz-") as tmp:
        path = Path(tmp) / "bank"
        path.write_bytes(data)
        try:
            packs, _ = import_file(fmt, path, Path(tmp) / "out")
        except BankImportError as exc:
            assert exc.problems and all(p.line >= 0 for p in exc.problems)
            return
        for pack in packs:  # what an import accepts loads as a pack
            file = Path(tmp) / f"{pack.quiz_id}.yaml"
            file.write_text(pack.text, encoding="utf-8")
            quiz, problems = load_file(file)
            assert quiz is not None, problems


@pytest.mark.parametrize("fmt", sorted(READERS))
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(fmt, data):
    _import(fmt, data)


@pytest.mark.parametrize("fmt", sorted(READERS))
@FUZZ
@given(text=st.text(max_size=300))
def test_random_text(fmt, text):
    _import(fmt, text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("fmt", sorted(READERS))
@FUZZ
@given(data=st.data())
def test_random_pieces_of_the_format(fmt, data):
    pieces = data.draw(st.lists(st.sampled_from(_PIECES[fmt]), max_size=60))
    _import(fmt, "".join(pieces).encode("utf-8"))

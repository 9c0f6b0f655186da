"""The pack writer (bot/content/pack_writer.py): what importers and chat authoring read,
written as YAML and validated in memory, pictures from their bytes, nothing on disk."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest
from PIL import Image

from bot.content.items import Kind
from bot.content.pack_writer import NO_ALT, PackSource, QuestionSource, check_pack, load_pack


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(out, "PNG")
    return out.getvalue()


def source(*questions: QuestionSource) -> PackSource:
    return PackSource(row=0, id="drafted", title={"en": "Drafted"}, tags=[],
                      questions=list(questions), language="en")


def question(number: int, **kinds: object) -> QuestionSource:
    q = QuestionSource(row=number, id=f"drafted-{number}",
                       texts={"prompt": {"en": f"Question {number}?"},
                              "explanation": {"en": "Because."}, "details": {}},
                       options=[], answer=-1)
    for name, value in kinds.items():
        setattr(q, name, value)
    return q


@pytest.fixture
def no_temporary_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation needs no file: making one fails the test."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pack writer made a temporary file or folder")

    for name in ("TemporaryDirectory", "mkdtemp", "mkstemp", "NamedTemporaryFile"):
        monkeypatch.setattr(tempfile, name, refuse)


def test_every_kind_is_written_and_validated_in_memory(no_temporary_files: None) -> None:
    pack = source(
        question(1, options=[{"en": "a"}, {"en": "b"}], answer=1),
        question(2, kind="multi", options=[{"en": "a"}, {"en": "b"}, {"en": "c"}],
                 answer=0, answers=(0, 2)),
        question(3, kind="truefalse", truth=False),
        question(4, kind="numeric", numeric={"value": 2.87, "tolerance": 0.1},
                 unit={"en": "GB"}),
        question(5, kind="numeric", numeric={"value": 1e9, "min": 9e8, "max": 1.1e9}),
        question(6, kind="text", accept={"en": ["loss scaling", "GradScaler: dynamic"]},
                 latin=["los skeling"]),
        question(7, kind="order", options=[{"en": "first"}, {"en": "second"}]),
    )
    imported, problems = check_pack(pack, ["# drafted"])
    assert imported is not None, problems
    quiz, found = load_pack(imported.text)
    assert quiz is not None, found
    q = quiz.questions
    assert [x.kind for x in q] == [Kind.CHOICE, Kind.MULTI, Kind.TRUEFALSE, Kind.NUMERIC,
                                   Kind.NUMERIC, Kind.TEXT, Kind.ORDER]
    assert q[0].answer == 1 and q[1].answers == (0, 2) and q[2].answer == 1
    assert q[3].numeric is not None and (q[3].numeric.low, q[3].numeric.high) == (2.77, 2.97)
    assert q[3].numeric.unit is not None and q[3].numeric.unit.get("en") == "GB"
    assert q[4].numeric is not None and (q[4].numeric.low, q[4].numeric.high) == (9e8, 1.1e9)
    assert q[5].accept is not None and q[5].accept.texts["en"][1] == "GradScaler: dynamic"
    assert q[5].accept.latin == ("los skeling",)
    assert [o.text.get("en") for o in q[6].options] == ["first", "second"]


def test_a_problem_is_reported_at_its_row(no_temporary_files: None) -> None:
    pack = source(question(1, options=[{"en": "a"}, {"en": "b"}], answer=0),
                  question(2, kind="multi", options=[{"en": "a"}, {"en": "b"}, {"en": "c"}],
                           answer=0, answers=(0,)))
    imported, problems = check_pack(pack, ["# drafted"])
    assert imported is None
    assert [(row, p.warning) for row, p in problems if not p.warning] == [(2, False)]
    assert "a multi question needs at least two options" in problems[0][1].message


def test_pictures_are_checked_from_their_bytes(no_temporary_files: None) -> None:
    pack = source(question(1, options=[{"en": "a"}, {"en": "b"}], answer=0,
                           image="images/drafted-1.png"))
    imported, problems = check_pack(pack, ["# drafted"], [("images/drafted-1.png", png())])
    assert imported is not None, problems
    # a picture with no text gets one saying so (a photo sent in a chat has none)
    assert f"en: {NO_ALT['en']}" in imported.text
    imported, problems = check_pack(pack, ["# drafted"], [("images/drafted-1.png", b"junk")])
    assert imported is None
    assert any(row == 1 and "does not decode" in p.message for row, p in problems), problems


def test_a_loaded_pack_serves_its_pictures_from_its_folder(tmp_path: Path) -> None:
    pack = source(question(1, options=[{"en": "a"}, {"en": "b"}], answer=0,
                           image="images/drafted-1.png",
                           image_alt={"en": "A white rectangle."}))
    files = [("images/drafted-1.png", png())]
    imported, problems = check_pack(pack, ["# drafted"], files)
    assert imported is not None, problems
    quiz, found = load_pack(imported.text, files, tmp_path / "drafted")
    assert quiz is not None, found
    q = quiz.questions[0]
    assert q.image_alt is not None and q.image_alt.get("en") == "A white rectangle."
    assert Path(quiz.image_path(q, "en") or "").read_bytes() == files[0][1]

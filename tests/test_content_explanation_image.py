"""A question's explanation picture in a pack (`explanation_image`, described by
`explanation_image_alt` in each language of the question): validated as images are, refused
at its line when its text is missing, a PNG or JPEG only (it is sent as a photo), kept by
the content cache; the bundled 1F1B one in en, bn and hi."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from bot.content import load_catalog
from bot.content.cache import Entry, decode, encode
from bot.content.loader import load_file
from tests.conftest import ROOT

CONTENT_DIR = ROOT / "content"

PACK = """\
id: demo
title: {en: Demo}
questions:
  - id: d-one
    prompt: {en: What does this do?, bn: এটি কী করে?}
    options:
      - {en: Grows, bn: বাড়ে, correct: true}
      - {en: Nothing, bn: কিছু না}
    explanation: {en: Because., bn: কারণ।}
"""
PICTURE = "    explanation_image: why.png\n"
ALT = "    explanation_image_alt: {en: A white rectangle., bn: একটি সাদা আয়তক্ষেত্র।}\n"


def write(tmp_path: Path, extra: str, picture: str = "why.png") -> Path:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(out, "PNG")
    (tmp_path / picture).write_bytes(out.getvalue())
    path = tmp_path / "demo.yaml"
    path.write_text(PACK + extra, "utf-8")
    return path


def errors(path: Path) -> list[str]:
    quiz, found = load_file(path)
    assert quiz is None, "a pack with an error must not load"
    return [str(p) for p in found if not p.warning]


def test_an_explanation_picture_with_its_text_reaches_the_catalog(tmp_path: Path) -> None:
    quiz, found = load_file(write(tmp_path, PICTURE + ALT))
    assert quiz is not None, found
    q = quiz.questions[0]
    assert q.explanation_image is not None and q.explanation_image_alt is not None
    assert q.explanation_image_alt.get("bn") == "একটি সাদা আয়তক্ষেত্র।"
    assert quiz.explanation_image_path(q, "bn") == str(tmp_path / "why.png")
    assert not q.has_media  # the question's card is not drawn for it


def test_a_missing_text_is_refused_at_its_line(tmp_path: Path) -> None:
    found = errors(write(tmp_path, PICTURE))
    assert len(found) == 1, found
    assert found[0].startswith(f"{tmp_path / 'demo.yaml'}:4: error: question 1."
                               "explanation_image_alt"), found
    assert "an explanation_image needs explanation_image_alt" in found[0]
    found = errors(write(tmp_path, PICTURE + "    explanation_image_alt: {en: A rectangle.}\n"))
    assert len(found) == 1 and "explanation_image_alt has no bn text" in found[0], found


def test_a_text_without_a_picture_an_svg_and_a_missing_file_are_refused(tmp_path: Path
                                                                         ) -> None:
    found = errors(write(tmp_path, ALT))
    assert len(found) == 1 and "the question has no explanation_image" in found[0], found
    found = errors(write(tmp_path, "    explanation_image: why.svg\n" + ALT))
    assert len(found) == 1 and "must be a PNG or JPEG" in found[0], found
    found = errors(write(tmp_path, "    explanation_image: gone.png\n" + ALT))
    assert len(found) == 1 and "explanation_image 'gone.png'" in found[0], found
    (tmp_path / "bad.png").write_bytes(b"not a picture")
    found = errors(write(tmp_path, "    explanation_image: bad.png\n" + ALT))
    assert len(found) == 1 and "explanation_image 'bad.png'" in found[0], found


def test_the_content_cache_keeps_it(tmp_path: Path) -> None:
    quiz, found = load_file(write(tmp_path, PICTURE + ALT))
    assert quiz is not None, found
    entry = Entry(quiz, 1, [5], [], {})
    back = decode(encode(entry, "v", "k"), "v", "k").quiz.questions[0]
    assert back.explanation_image == quiz.questions[0].explanation_image
    assert back.explanation_image_alt == quiz.questions[0].explanation_image_alt


def test_a_bundled_question_explains_with_the_1f1b_picture_in_each_language() -> None:
    quiz = load_catalog(CONTENT_DIR).quizzes["pipeline-parallelism"]
    q = quiz.question("pp-stage0-oom")
    assert q.explanation_image_alt is not None
    for locale in ("en", "bn", "hi"):
        path = quiz.explanation_image_path(q, locale)
        assert path is not None and path.endswith("images/pipeline-1f1b.png")
        assert Path(path).is_file() and q.explanation_image_alt.get(locale) != \
            q.explanation_image_alt.get("en" if locale != "en" else "bn")

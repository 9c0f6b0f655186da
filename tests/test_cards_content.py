"""Code, formulas and images in a pack: each bad one reported at its file and line, nothing
loaded; good ones reach the catalog (and the cache) intact."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from bot.content import ContentError, load_catalog
from bot.content.loader import load_file

HEAD = """\
id: demo
title: {en: Demo}
questions:
  - id: d-one
    prompt: {en: What does this do?}
"""
TAIL = """\
    options:
      - {en: "`x.grad` grows", correct: true}
      - {en: Nothing}
    explanation: {en: Because.}
"""


ALT = "image_alt: {en: A white rectangle.}\n"


def pack(tmp_path: Path, media: str, tail: str = TAIL, alt: str | None = ALT) -> Path:
    """A pack showing `media`; an image gets `alt` (after it: the lines above keep their
    numbers) unless the media says its own."""
    media = textwrap.dedent(media)
    if alt and "image:" in media and "image_alt:" not in media:
        media += alt
    path = tmp_path / "demo.yaml"
    path.write_text(HEAD + textwrap.indent(media, "    ") + tail, "utf-8")
    return path


def png(tmp_path: Path, name: str = "pic.png", size: tuple[int, int] = (40, 30)) -> Path:
    out = io.BytesIO()
    Image.new("RGB", size, "white").save(out, "PNG")
    path = tmp_path / name
    path.write_bytes(out.getvalue())
    return path


def errors(path: Path) -> list[str]:
    quiz, found = load_file(path)
    assert quiz is None, "a pack with an error must not load"
    return [str(p) for p in found if not p.warning]


def test_code_formula_and_image_reach_the_catalog(tmp_path: Path) -> None:
    png(tmp_path)
    path = pack(tmp_path, """\
        code:
          language: python
          text: |
            for step, batch in enumerate(loader):
                loss = model(batch)
                loss.backward()
        formula: 'M \\propto \\sqrt{N}'
        image: {en: pic.png}
        """)
    quiz, found = load_file(path)
    assert quiz is not None, found
    q = quiz.questions[0]
    assert q.code is not None and q.code.language == "python"
    assert q.code.text.get("bn").splitlines()[1] == "    loss = model(batch)"  # indent kept
    assert q.formula is not None and q.formula.get("hi") == "M \\propto \\sqrt{N}"
    assert quiz.image_path(q, "bn") == str(tmp_path / "pic.png")
    assert q.has_media
    exported = quiz.export()["questions"][0]
    assert exported["code"]["language"] == "python" and "formula" in exported


@pytest.mark.parametrize(("media", "line", "message"), [
    ("image: ../outside.png\n", 6, "relative to the pack's folder"),
    ("image: /etc/passwd.png\n", 6, "relative to the pack's folder"),
    ("image: pic.gif\n", 6, "PNG, JPEG or SVG"),
    ("image: missing.png\n", 6, "cannot open the file"),
    ("formula: '\\frac{1}{'\n", 6, "does not parse as mathtext"),
    ("code: {language: klingon, text: x}\n", 6, "not a language Pygments knows"),
    ("code: {text: '   '}\n", 6, "code is empty"),
])
def test_bad_media_is_an_error_at_its_line(tmp_path: Path, media: str, line: int,
                                           message: str) -> None:
    found = errors(pack(tmp_path, media))
    assert len(found) == 1 and f"demo.yaml:{line}: error:" in found[0] and message in found[0], \
        found


def test_code_that_does_not_fit_a_card(tmp_path: Path) -> None:
    wide = "x = " + "1 + " * 30 + "1"
    found = errors(pack(tmp_path, f"code: {{text: '{wide}'}}\n"))
    assert len(found) == 1 and "a card holds 24 lines of 64" in found[0]


def test_an_option_with_unclosed_inline_code_is_warned(tmp_path: Path) -> None:
    tail = TAIL.replace('"`x.grad` grows"', '"`x.grad grows"')
    quiz, found = load_file(pack(tmp_path, "formula: x^2\n", tail))
    assert quiz is not None  # plain text may have a backtick: a warning
    assert next(str(p) for p in found if "backticks" in str(p)).count("demo.yaml:8: warning:")


def test_a_symbolic_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = png(tmp_path, "outside.png")
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / "pic.png").symlink_to(outside)
    found = errors(pack(folder, "image: pic.png\n"))
    assert len(found) == 1 and "leads outside the pack's folder" in found[0]


def test_an_image_that_does_not_decode(tmp_path: Path) -> None:
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    found = errors(pack(tmp_path, "image: pic.png\n"))
    assert len(found) == 1 and "does not decode" in found[0]


def test_a_huge_image_is_refused(tmp_path: Path) -> None:
    png(tmp_path, size=(5000, 4000))  # a small file that decodes to 20 megapixels
    found = errors(pack(tmp_path, "image: pic.png\n"))
    assert len(found) == 1 and "scale it down" in found[0]


def test_a_large_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pic.png").write_bytes(b"\0" * (2 * 1024 * 1024 + 1))
    found = errors(pack(tmp_path, "image: pic.png\n"))
    assert len(found) == 1 and "larger than 2048 KiB" in found[0]


SVG = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ' \
      'width="10" height="10">{}</svg>'


@pytest.mark.parametrize(("body", "message"), [
    ('<image xlink:href="http://example.com/x.png"/>', "refers to"),
    ('<image href="file:///etc/passwd"/>', "refers to"),
    ('<rect style="fill: url(other.svg#p)"/>', "style refers to another file"),
    ("<style>@import 'x.css';</style>", "style refers to another file"),
    ("<script>alert(1)</script>", "<script>"),
])
def test_an_svg_referring_outside_itself_is_refused(tmp_path: Path, body: str,
                                                    message: str) -> None:
    (tmp_path / "pic.svg").write_text(SVG.format(body))
    found = errors(pack(tmp_path, "image: pic.svg\n"))
    assert len(found) == 1 and message in found[0], found


def test_an_svg_with_entities_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pic.svg").write_text(
        '<!DOCTYPE svg [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + SVG.format("&e;"))
    found = errors(pack(tmp_path, "image: pic.svg\n"))
    assert len(found) == 1 and "DTD" in found[0]


def test_a_plain_svg_and_internal_references_pass(tmp_path: Path) -> None:
    (tmp_path / "pic.svg").write_text(SVG.format(
        '<defs><path id="p" d="M0 0L5 5"/></defs><use xlink:href="#p"/>'))
    quiz, found = load_file(pack(tmp_path, "image: pic.svg\n"))
    assert quiz is not None, found


def test_media_per_language_warns_about_a_missing_language(tmp_path: Path) -> None:
    png(tmp_path)
    quiz, found = load_file(pack(tmp_path, "image: {en: pic.png, bn: pic.png}\n"))
    assert quiz is not None
    assert any("demo.yaml:6: warning:" in str(p) and "image has no hi version" in str(p)
               for p in found), found


def test_an_image_without_a_text_is_refused(tmp_path: Path) -> None:
    png(tmp_path)
    found = errors(pack(tmp_path, "image: pic.png\n", alt=None))
    assert len(found) == 1 and "an image needs image_alt" in found[0], found
    assert found[0].startswith(f"{tmp_path / 'demo.yaml'}:4: error: question 1.image_alt")


def test_an_image_text_needs_each_language_of_the_prompt(tmp_path: Path) -> None:
    png(tmp_path)
    path = tmp_path / "demo.yaml"
    path.write_text(HEAD.replace("{en: What does this do?}", "{en: What?, bn: কী?}")
                    + "    image: pic.png\n    image_alt: {en: A white rectangle.}\n" + TAIL,
                    "utf-8")
    found = errors(path)
    assert len(found) == 1 and "image_alt has no bn text" in found[0], found
    path.write_text(path.read_text("utf-8").replace(
        "{en: A white rectangle.}", "{en: A white rectangle., bn: একটি সাদা আয়তক্ষেত্র।}"))
    quiz, problems = load_file(path)
    assert quiz is not None, problems
    alt = quiz.questions[0].image_alt
    assert alt is not None and alt.get("bn") == "একটি সাদা আয়তক্ষেত্র।"
    assert any("image_alt has no hi version" in str(p) for p in problems if p.warning)


def test_an_image_text_within_a_caption_and_an_alt_text(tmp_path: Path) -> None:
    png(tmp_path)
    found = errors(pack(tmp_path, "image: pic.png\n", alt=f"image_alt: {{en: {'x' * 1025}}}\n"))
    assert len(found) == 1 and "image_alt is 1025 characters, the limit is 1024" in found[0]


def test_an_image_text_without_an_image_is_refused(tmp_path: Path) -> None:
    found = errors(pack(tmp_path, "image_alt: {en: Nothing.}\n"))
    assert len(found) == 1 and "image_alt describes an image" in found[0], found


def test_the_cache_keeps_code_formula_and_image_and_checks_the_image_again(
    tmp_path: Path,
) -> None:
    content, cache = tmp_path / "content", tmp_path / "cache"
    content.mkdir()
    png(content)
    pack(content, "code: {language: bash, text: 'ls -l'}\nformula: 'a^2'\nimage: pic.png\n")
    first = load_catalog(content, cache)
    again = load_catalog(content, cache)  # from the cache
    assert len(list((cache / "content").iterdir())) == 1
    assert again.quizzes["demo"] == first.quizzes["demo"]
    q = again.quizzes["demo"].questions[0]
    assert q.code == first.quizzes["demo"].questions[0].code and q.image is not None
    assert q.image_alt is not None and q.image_alt.get("hi") == "A white rectangle."
    assert again.quizzes["demo"].image_path(q, "en") == str(content / "pic.png")
    # the pack's bytes (the key) are the same, its image is not: validated again
    (content / "pic.png").write_bytes(b"broken")
    with pytest.raises(ContentError, match="does not decode"):
        load_catalog(content, cache)
    (content / "pic.png").unlink()
    with pytest.raises(ContentError, match="cannot open the file"):
        load_catalog(content, cache)

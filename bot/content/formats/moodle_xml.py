"""Moodle XML, the format Moodle exports a question bank in.

    <quiz>
      <question type="category"><category><text>$course$/top/Mixed precision</text>
      </category></question>
      <question type="multichoice">
        <name><text>mp-loss-scaling</text></name>
        <questiontext format="html"><text><![CDATA[<p>Why scale the loss?</p>]]></text>
        </questiontext>
        <generalfeedback format="html"><text>…</text></generalfeedback>
        <answer fraction="100"><text>To keep small gradients representable</text></answer>
        <answer fraction="0"><text>To speed up the optimizer</text></answer>
      </question>
    </quiz>

Read: `multichoice` (the answer at 100% is the key; a multiple-answer question, whose answers
earn credit together, is refused; partial credit beside one answer at 100% is dropped with a
warning) and `truefalse`; a `category` question starts a new pack; every other type is
skipped at its line. HTML text is reduced to plain text, except that a question's code
(`<pre>`), formula (`$$…$$`) and picture (an embedded `<file>` its `<img>` shows) become its
`code`, `formula` and `image` (written beside the pack), as the export writes them. The
general feedback, else the right answer's, is the explanation. Parsed by the standard
library's expat through defusedxml: a DOCTYPE, an entity declaration or an external reference
is refused, so no entity is ever expanded (a "billion laughs" file costs nothing).
"""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from bot.content import limits
from bot.content.formats.bank import Item, Report, html_media, html_text, key_of
from bot.content.formats.media import picture, plugin_src, prompt_html
from bot.content.items import Quiz
from bot.content.problems import short

_PLAIN_FORMATS = ("plain_text", "markdown")


class _Lines(ET.TreeBuilder):
    """A tree that remembers the line each element starts on."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[int, int] = {}
        self.parser: DefusedXMLParser | None = None

    def start(self, tag: str, attrs: dict[str, str]) -> ET.Element:
        element = super().start(tag, attrs)
        if self.parser is not None:
            self.lines[id(element)] = self.parser.parser.CurrentLineNumber
        return element


def _parse(data: bytes, report: Report) -> tuple[ET.Element, dict[int, int]] | None:
    builder = _Lines()
    parser = DefusedXMLParser(target=builder, forbid_dtd=True)
    builder.parser = parser
    try:
        parser.feed(data)
        root = parser.close()
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else 1
        report(line, f"not well-formed XML: {exc.msg if hasattr(exc, 'msg') else exc}")
        return None
    except DefusedXmlException:
        report(parser.parser.CurrentLineNumber or 1,
               "a DOCTYPE, entity declaration or external reference: refused (a question "
               "bank needs none; Moodle writes none)")
        return None
    if not isinstance(root, ET.Element):
        report(1, "no XML element in the file")
        return None
    return root, builder.lines


def _text(element: ET.Element | None) -> str:
    """The plain text of an element holding `<text>` (and a `format` attribute)."""
    if element is None:
        return ""
    node = element.find("text")
    raw = "".join(node.itertext()) if node is not None else ""
    if element.get("format", "html") in _PLAIN_FORMATS:
        return "\n".join(line.strip() for line in raw.strip().split("\n"))
    return html_text(raw)


def read(data: bytes, report: Report) -> list[Item]:
    parsed = _parse(data, report)
    if parsed is None:
        return []
    root, lines = parsed
    if root.tag != "quiz":
        report(lines.get(id(root), 1), f"the document is <{short(root.tag)}>, not a Moodle "
               "question bank (<quiz> with <question> elements)")
        return []
    items: list[Item] = []
    category = ""
    for question in root:
        if question.tag != "question":
            continue
        line = lines.get(id(question), 1)
        kind = question.get("type", "")
        if kind == "category":
            category = _text(question.find("category")).strip()
            continue
        if kind not in ("multichoice", "truefalse"):
            report(line, f"skipped: a question of type {short(kind)!r}; quizbot asks "
                   "multiple-choice and true/false questions", warning=True)
            continue
        item = _question(question, kind, line, report)
        if item is not None:
            item.category = category
            items.append(item)
    return items


def _fraction(answer: ET.Element) -> float | None:
    try:
        return float(answer.get("fraction", "0"))
    except ValueError:
        return None


def _question(question: ET.Element, kind: str, line: int, report: Report) -> Item | None:
    answers = question.findall("answer")
    if len(answers) > limits.MAX_OPTIONS:
        report(line, f"{len(answers)} answers; a question has at most {limits.MAX_OPTIONS}")
        return None
    fractions = [_fraction(a) for a in answers]
    if None in fractions:
        report(line, "an answer's fraction is not a number (100 for the right answer, 0 for "
               "a wrong one)")
        return None
    key = key_of([f for f in fractions if f is not None], line, report,
                 "give it fraction=\"100\" and the others 0")
    if key is None:
        return None
    name = _text(question.find("name")).strip()
    text = question.find("questiontext")
    media = None
    if text is not None and text.get("format", "html") not in _PLAIN_FORMATS:
        raw, media = html_media("".join(node.itertext()) if (node := text.find("text"))
                                is not None else "", _files(text, line, report))
        prompt = html_text(raw)
    else:
        prompt = _text(text)
    feedback = _text(question.find("generalfeedback")) or _text(answers[key].find("feedback"))
    if kind == "truefalse":
        said = _text(answers[key]).strip().lower()
        if said not in ("true", "false"):
            report(line, f"a true/false answer is {short(said)!r}, not true or false")
            return None
        return Item(line, prompt, [], 0 if said == "true" else 1, feedback, name,
                    media=media)
    return Item(line, prompt, [_text(a) for a in answers], key, feedback, name, media=media)


def _files(text: ET.Element, line: int, report: Report) -> dict[str, bytes]:
    """The files embedded in a question's text (`<file encoding="base64">`), by name."""
    files = {}
    for file in text.findall("file"):
        try:
            files[file.get("name", "")] = base64.b64decode(file.text or "", validate=True)
        except ValueError:
            report(line, f"the embedded file {short(file.get('name', ''))!r} is not valid "
                   "base64; left out", warning=True)
    return files


# --- writing ---------------------------------------------------------------------------------


def _texts(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {"format": "plain_text"} | attrs)
    ET.SubElement(element, "text").text = text
    return element


def dump(quizzes: Iterable[Quiz], language: str) -> bytes:
    """The quizzes as Moodle XML in one language: a category per quiz, each question named
    by its id, its explanation as the general feedback, the right answer at 100%. A question
    with code, a formula or a picture has HTML text (media.prompt_html), its picture
    embedded as a base64 `<file>` that `@@PLUGINFILE@@/name` shows."""
    root = ET.Element("quiz")
    for quiz in quizzes:
        category = ET.SubElement(root, "question", type="category")
        text = ET.SubElement(ET.SubElement(category, "category"), "text")
        text.text = f"$course$/top/{quiz.title.get(language).replace('/', '∕')}"
        for q in quiz.questions:
            question = ET.SubElement(root, "question", type="multichoice")
            ET.SubElement(ET.SubElement(question, "name"), "text").text = q.id
            if q.has_media:  # HTML: the code, the formula, the picture embedded as a file
                found = picture(quiz, q, language)
                src = None if found is None else plugin_src(found.name)
                text = _texts(question, "questiontext", prompt_html(q, language, src=src),
                              format="html")
                if found is not None:
                    ET.SubElement(text, "file", name=found.name, path="/",
                                  encoding="base64").text = base64.b64encode(
                                      found.data).decode("ascii")
            else:
                _texts(question, "questiontext", q.prompt.get(language))
            _texts(question, "generalfeedback", q.explanation.get(language))
            for tag, value in (("defaultgrade", "1"), ("penalty", "0"), ("hidden", "0"),
                               ("single", "true"), ("shuffleanswers", "false"),
                               ("answernumbering", "ABCD")):
                ET.SubElement(question, tag).text = value
            for i, option in enumerate(q.options):
                answer = _texts(question, "answer", option.text.get(language),
                                fraction="100" if i == q.answer else "0")
                _texts(answer, "feedback", "")
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"

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

Read: `multichoice` (the answer at 100% is the key; a multiple-answer question, `<single>` false,
whose answers earn 100% together, is a multi, scored all or nothing; partial credit beside one
answer at 100% is dropped with a warning), `truefalse`, `numerical` (the answer at 100%, its
`<tolerance>`, the unit of multiplier 1), `shortanswer` (the answers at 100% are the accepted
forms) and `ordering` (the plugin qtype_ordering: its answers in their right order); a
`category` question starts a new pack; every other type is skipped at its line. HTML text
is reduced to plain text, except that a question's code
(`<pre>`), formula (`$$…$$`) and picture (an embedded `<file>` its `<img>` shows) become its
`code`, `formula` and `image` (written beside the pack), as the export writes them. The
general feedback, else the right answer's, is the explanation. Parsed by the standard
library's expat through defusedxml: a DOCTYPE, an entity declaration or an external reference
is refused, so no entity is ever expanded (a "billion laughs" file costs nothing).
"""

from __future__ import annotations

import base64
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from bot.content import limits
from bot.content.formats.bank import Item, Report, html_media, html_text, keys_of, share
from bot.content.formats.media import picture, plugin_src, prompt_html
from bot.content.items import Kind, Question, Quiz
from bot.content.problems import short

_PLAIN_FORMATS = ("plain_text", "markdown")
_READ = ("multichoice", "truefalse", "numerical", "shortanswer", "ordering")


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
        if kind not in _READ:
            report(line, f"skipped: a question of type {short(kind)!r}; quizbot asks "
                   f"{', '.join(_READ)} questions", warning=True)
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


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


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
    name = _text(question.find("name")).strip()
    text = question.find("questiontext")
    media = None
    if text is not None and text.get("format", "html") not in _PLAIN_FORMATS:
        raw, media = html_media("".join(node.itertext()) if (node := text.find("text"))
                                is not None else "", _files(text, line, report))
        prompt = html_text(raw)
    else:
        prompt = _text(text)
    general = _text(question.find("generalfeedback"))
    credit = [f for f in fractions if f is not None]
    if kind == "ordering":  # the plugin writes the items in order, fraction = position
        if not 2 <= len(answers) <= limits.MAX_ORDER_ITEMS:
            report(line, f"an ordering question of {len(answers)} items; quizbot orders "
                   f"{limits.MIN_ORDER_ITEMS} to {limits.MAX_ORDER_ITEMS}")
            return None
        ranked = sorted(range(len(answers)), key=lambda i: (credit[i], i))
        return Item(line, prompt, [_text(answers[i]) for i in ranked], -1, general, name,
                    media=media, kind="order")
    full = [i for i, c in enumerate(credit) if c >= 100]
    if kind in ("numerical", "shortanswer"):
        if not full:
            report(line, "no answer at 100%: give the right answer fraction=\"100\"")
            return None
        feedback = general or _text(answers[full[0]].find("feedback"))
        if kind == "shortanswer":
            forms = [form for i in full if (form := _text(answers[i]).strip())]
            return Item(line, prompt, [], -1, feedback, name, media=media, kind="text",
                        accept=forms)
        value = _number(_text(answers[full[0]]))
        tolerance = _number(answers[full[0]].findtext("tolerance") or "0")
        if value is None or tolerance is None:
            report(line, "the numerical answer or its tolerance is not a number")
            return None
        unit = next((u.findtext("unit_name", "").strip() for u in question.iter("unit")
                     if _number(u.findtext("multiplier") or "1") == 1), "") or None
        return Item(line, prompt, [], -1, feedback, name, media=media, kind="numeric",
                    numeric={"value": value, "tolerance": abs(tolerance)}, unit=unit)
    keys = keys_of(credit, line, report, "give it fraction=\"100\" and the others 0")
    if keys is None:
        return None
    key = keys[0]
    feedback = general or _text(answers[key].find("feedback"))
    if kind == "truefalse":
        said = _text(answers[key]).strip().lower()
        if said not in ("true", "false"):
            report(line, f"a true/false answer is {short(said)!r}, not true or false")
            return None
        return Item(line, prompt, [], 0 if said == "true" else 1, feedback, name,
                    media=media, kind="truefalse")
    if len(keys) > 1:
        return Item(line, prompt, [_text(a) for a in answers], key, general, name,
                    media=media, kind="multi", answers=keys)
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
            question = ET.SubElement(root, "question", type=_QTYPES[q.kind])
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
            for tag, value in (("defaultgrade", "1"), ("penalty", "0"), ("hidden", "0")):
                ET.SubElement(question, tag).text = value
            _answers(question, q, language)
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


_QTYPES = {Kind.CHOICE: "multichoice", Kind.MULTI: "multichoice", Kind.TRUEFALSE: "truefalse",
           Kind.NUMERIC: "numerical", Kind.TEXT: "shortanswer", Kind.ORDER: "ordering"}


def _answers(question: ET.Element, q: Question, language: str) -> None:
    """A question's answers as its qtype writes them."""
    def answer(text: str, fraction: str) -> ET.Element:
        element = _texts(question, "answer", text, fraction=fraction)
        _texts(element, "feedback", "")
        return element

    if q.kind is Kind.TRUEFALSE:
        answer("true", "100" if q.answer == 0 else "0")
        answer("false", "100" if q.answer == 1 else "0")
    elif q.kind is Kind.NUMERIC and q.numeric is not None:
        n = q.numeric
        # Moodle's tolerance is symmetric: a range becomes its middle and half its width
        middle = n.value if n.low + n.high == 2 * n.value else (n.low + n.high) / 2
        element = answer(f"{middle:.10g}", "100")
        ET.SubElement(element, "tolerance").text = f"{(n.high - n.low) / 2:.10g}"
        if n.unit is not None:
            unit = ET.SubElement(ET.SubElement(question, "units"), "unit")
            ET.SubElement(unit, "multiplier").text = "1"
            ET.SubElement(unit, "unit_name").text = n.unit.get(language)
    elif q.kind is Kind.TEXT and q.accept is not None:
        ET.SubElement(question, "usecase").text = "0"  # case-insensitive
        for form in dict.fromkeys((*q.accept.forms(language), *q.accept.latin)):
            answer(form, "100")
    elif q.kind is Kind.ORDER:  # qtype_ordering: the items in order, all of them shown
        for tag, value in (("layouttype", "VERTICAL"), ("selecttype", "ALL"),
                           ("selectcount", "0"), ("gradingtype", "ABSOLUTE_POSITION")):
            ET.SubElement(question, tag).text = value
        for position, option in enumerate(q.options, start=1):
            answer(option.text.get(language), str(position))
    else:
        multi = q.kind is Kind.MULTI
        for tag, value in (("single", "false" if multi else "true"),
                           ("shuffleanswers", "false"), ("answernumbering", "ABCD")):
            ET.SubElement(question, tag).text = value
        right, wrong = len(q.answers), len(q.options) - len(q.answers)
        for i, option in enumerate(q.options):
            fraction = ("100" if i == q.answer else "0") if not multi else (
                share(right) if i in q.answers else f"-{share(wrong)}")
            answer(option.text.get(language), fraction)

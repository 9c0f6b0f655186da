"""A question of any kind written in a private chat as a form: `/question <kind>` and then one
field a line (`prompt: …`, `right: …`, `answer: 0.4`, `tolerance: 0.05`, …), the field names
in English as the commands are, the texts in the draft's language.

`read` turns a form into what a draft stores (the question's JSON, bot/core/authoring.py) or
into every problem it has, each a msgid and its values, so nothing is stored until the form
is whole. It applies the pack validator's rules for each kind (how many options, which are
right, a number's range, the length of an accepted answer, Latin spellings) in the author's
words; authoring then runs the validator itself on the question before storing it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.content import limits
from bot.content.items import FALSE, TRUE, Kind
from bot.core.grading import normalise_text, parse_number
from bot.i18n import Translator, _

KINDS: tuple[str, ...] = tuple(k.value for k in Kind)
# the fields each kind takes, in the order its form shows them
FIELDS: dict[Kind, tuple[str, ...]] = {
    Kind.CHOICE: ("prompt", "right", "wrong", "explanation"),
    Kind.MULTI: ("prompt", "right", "wrong", "explanation"),
    Kind.TRUEFALSE: ("prompt", "answer", "explanation"),
    Kind.NUMERIC: ("prompt", "answer", "tolerance", "min", "max", "unit", "explanation"),
    Kind.TEXT: ("prompt", "accept", "latin", "explanation"),
    Kind.ORDER: ("prompt", "item", "explanation"),
}
_REPEATED = frozenset({"right", "wrong", "item", "accept", "latin"})
_OPTIONAL = frozenset({"tolerance", "min", "max", "unit", "latin"})
# how many options each kind with options takes (the pack schema's OPTION_COUNTS)
_OPTION_COUNTS = {
    Kind.CHOICE: (limits.MIN_OPTIONS, limits.MAX_OPTIONS),
    Kind.MULTI: (3, limits.MAX_OPTIONS),
    Kind.ORDER: (limits.MIN_ORDER_ITEMS, limits.MAX_ORDER_ITEMS),
}
# "prompt: …", a full-width colon too (a Bengali or Hindi keyboard may give one)
_LINE = re.compile(r"\s*([A-Za-z]+)\s*[:：]\s*(.*)", re.S)
_SEVERAL = re.compile(r"\s*;\s*")  # accepted answers and Latin spellings on one line
_TRUTH = {
    **dict.fromkeys(("true", "yes", *(normalise_text(t) for _, t in TRUE.items())), True),
    **dict.fromkeys(("false", "no", *(normalise_text(t) for _, t in FALSE.items())), False),
}

Problem = tuple[str, dict[str, object]]  # a msgid and its values


@dataclass(frozen=True, slots=True)
class WrittenQuestion:
    """A form as the author sent it: the kind typed after /question, and the lines after."""

    kind: str
    text: str


def kind_of(word: str) -> Kind | None:
    return next((k for k in Kind if k.value == word.strip().lower()), None)


def read(form: WrittenQuestion) -> dict[str, object] | list[Problem]:
    """The question a draft stores (its JSON's fields, the picture aside), or every problem
    of the form."""
    kind = kind_of(form.kind)
    if kind is None:
        return [(_("“{kind}” is not a kind of question: write one of {kinds}."),
                 {"kind": form.kind, "kinds": ", ".join(KINDS)})]
    problems: list[Problem] = []
    fields: dict[str, list[str]] = {}
    written: list[tuple[str, str]] = []  # every field in the order written
    for number, line in enumerate(form.text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            problems.append((_("Line {line} does not start with a field name and a colon, "
                               "such as “prompt:”."), {"line": number}))
            continue
        name, value = match[1].lower(), " ".join(match[2].split())
        if name not in FIELDS[kind]:
            problems.append((_("Line {line}: a question of this kind has no “{field}:” (it "
                               "takes {fields})."),
                             {"line": number, "field": name, "fields": _listed(FIELDS[kind])}))
        elif not value:
            problems.append((_("Line {line}: “{field}:” is empty."),
                             {"line": number, "field": name}))
        elif value.startswith("<") and value.endswith(">"):  # the form's hint, sent as it is
            problems.append((_("Line {line}: write your own text in place of “{hint}”."),
                             {"line": number, "hint": value, "field": name}))
        elif name in fields and name not in _REPEATED:
            problems.append((_("“{field}:” is given twice; give it once."), {"field": name}))
        else:
            fields.setdefault(name, []).append(value)
            written.append((name, value))
    for name in FIELDS[kind]:
        if name not in fields and name not in _OPTIONAL | {"right", "wrong"} \
                and not any(p[1].get("field") == name for p in problems):
            problems.append((_("“{field}:” is missing."), {"field": name}))
    question: dict[str, object] = {
        "kind": kind.value, "prompt": _one(fields, "prompt"),
        "explanation": _one(fields, "explanation"),
    }
    problems += _key(kind, fields, written, question)
    return problems or question


def _one(fields: dict[str, list[str]], name: str) -> str:
    return fields.get(name, [""])[0]


def _listed(names: Sequence[str]) -> str:
    return ", ".join(f"{n}:" for n in names)


# each kind's key, read into `question` -------------------------------------------------------
def _key(kind: Kind, fields: dict[str, list[str]], written: list[tuple[str, str]],
         question: dict[str, object]) -> list[Problem]:
    if kind in (Kind.CHOICE, Kind.MULTI):
        return _chosen(kind, fields, written, question)
    if kind is Kind.ORDER:
        question["options"] = items = fields.get("item", [])
        return _options(kind, items)
    if kind is Kind.TRUEFALSE:
        said = _one(fields, "answer")
        question["truth"] = truth = _TRUTH.get(normalise_text(said))
        if truth is None and said:
            return [(_("“answer:” is true or false, not “{value}”."), {"value": said})]
        return []
    if kind is Kind.NUMERIC:
        return _numeric(fields, question)
    return _accepted(fields, question)


def _options(kind: Kind, options: Sequence[str]) -> list[Problem]:
    low, high = _OPTION_COUNTS[kind]
    problems: list[Problem] = []
    if not low <= len(options) <= high:
        problems.append((_("This kind takes {low} to {high} options; the form has {count}."),
                         {"low": low, "high": high, "count": len(options)}))
    if len(set(options)) < len(options):
        problems.append((_("Two options are the same; each option needs its own text."), {}))
    return problems


def _chosen(kind: Kind, fields: dict[str, list[str]], written: list[tuple[str, str]],
            question: dict[str, object]) -> list[Problem]:
    # the options in the order written, "right:" or "wrong:"
    options = [(value, name == "right") for name, value in written if name in ("right", "wrong")]
    question["options"] = [value for value, _ in options]
    answers = [i for i, (_, correct) in enumerate(options) if correct]
    question["answer"] = answers[0] if answers else -1
    if kind is Kind.MULTI:
        question["answers"] = answers
    right, wrong = len(answers), len(options) - len(answers)
    problems = _options(kind, [value for value, _ in options])
    if kind is Kind.CHOICE and (right != 1 or not wrong):
        problems.append((_("A choice question has exactly one “right:” line and at least one "
                           "“wrong:” line."), {}))
    if kind is Kind.MULTI and (right < 2 or not wrong):
        problems.append((_("A multi question has at least two “right:” lines and at least "
                           "one “wrong:” line."), {}))
    return problems


def _numeric(fields: dict[str, list[str]], question: dict[str, object]) -> list[Problem]:
    problems: list[Problem] = []
    numbers: dict[str, float] = {}
    for name in ("answer", "tolerance", "min", "max"):
        if not (said := _one(fields, name)):
            continue
        if (number := parse_number(said)) is None:
            problems.append((_("“{field}:” is a number, not “{value}”."),
                             {"field": name, "value": said}))
        else:
            numbers[name] = number
    if problems or "answer" not in numbers:
        return problems
    value = numbers.pop("answer")
    ranged = "min" in numbers or "max" in numbers
    if "tolerance" in numbers and ranged:
        return [(_("Give “tolerance:” or “min:” and “max:”, not both."), {})]
    if "tolerance" in numbers:
        if numbers["tolerance"] < 0:
            return [(_("“tolerance:” cannot be negative."), {})]
        question["numeric"] = {"value": value, "tolerance": numbers["tolerance"]}
    elif not ranged:
        return [(_("Give “tolerance:” (0 for the exact number), or “min:” and “max:”."), {})]
    elif "min" not in numbers or "max" not in numbers:
        return [(_("Give both “min:” and “max:”."), {})]
    elif not numbers["min"] <= value <= numbers["max"]:
        return [(_("The answer {value} is not between min {min} and max {max}."),
                 {"value": _one(fields, "answer"), "min": _one(fields, "min"),
                  "max": _one(fields, "max")})]
    else:
        question["numeric"] = {"value": value, "min": numbers["min"], "max": numbers["max"]}
    if unit := _one(fields, "unit"):
        question["unit"] = unit
    return []


def _accepted(fields: dict[str, list[str]], question: dict[str, object]) -> list[Problem]:
    problems: list[Problem] = []
    lists = {name: [f for line in fields.get(name, []) for f in _SEVERAL.split(line) if f]
             for name in ("accept", "latin")}
    for text in (*lists["accept"], *lists["latin"]):
        if (length := limits.tg_len(text)) > limits.TYPED_ANSWER:
            problems.append((_("“{text}” is {length} characters; an accepted answer has at most "
                               "{limit}."), {"text": text[:20] + "…", "length": length,
                                             "limit": limits.TYPED_ANSWER}))
    for text in lists["latin"]:
        if not all(c.isascii() or "\u00c0" <= c <= "\u024f" for c in text):
            problems.append((_("“{text}” is not in Latin letters: “latin:” lists answers spelled "
                               "in Latin letters, such as punargonona."), {"text": text}))
    question["accept"], question["latin"] = lists["accept"], lists["latin"]
    return problems


# the forms, as /question <kind> shows them ------------------------------------------------
_HINTS = {
    "prompt": _("the question"),
    "right": _("a right option"),
    "wrong": _("a wrong option"),
    "explanation": _("why: shown as soon as someone answers"),
    "tolerance": _("how far off an answer may be either way (0: exactly)"),
    "min": _("or the smallest right number, with max:"),
    "max": _("and the largest"),
    "unit": _("the unit, if any (GB)"),
    "accept": _("an accepted answer; several separated by ;"),
    "latin": _("the answer spelled in Latin letters, if it is in Bengali or Hindi"),
    "item": _("an item; the items in the right order, 2 to 6 (they are shuffled when asked)"),
}
_ANSWER_HINTS = {Kind.TRUEFALSE: _("true or false: whether the statement is true"),
                 Kind.NUMERIC: _("the right number")}
_ABOUT = {
    Kind.CHOICE: _("One right option."),
    Kind.MULTI: _("Select all that apply: two or more right options, at least one wrong."),
    Kind.TRUEFALSE: _("A statement, true or false."),
    Kind.NUMERIC: _("A number typed as the answer, right within a tolerance or a range."),
    Kind.TEXT: _("A short answer typed in words."),
    Kind.ORDER: _("Items to put in order."),
}
# how many lines of a field the form shows
_SHOWN = {"right": 2, "wrong": 2, "item": 3}


def form_text(word: str | None, t: Translator) -> str:
    """/question alone: the kinds; /question <kind>: its form, to fill in and send back."""
    kind = kind_of(word) if word else None
    if kind is None:
        lines = [t.gettext("Write a question of any kind: /question followed by its kind, "
                           "then one field a line. Send /question <kind> to see its form:")]
        lines += [f"/question {k.value} — {t.gettext(_ABOUT[k])}" for k in Kind]
        if word:
            lines.insert(0, t.gettext("“{kind}” is not a kind of question: write one of "
                                      "{kinds}.", kind=word, kinds=", ".join(KINDS)))
        return "\n".join(lines)
    form = [f"/question {kind.value}"]
    for name in FIELDS[kind]:
        hint = _ANSWER_HINTS[kind] if name == "answer" else _HINTS[name]
        form += [f"{name}: <{t.gettext(hint)}>"] * _SHOWN.get(name, 1)
    return "\n".join([
        t.gettext(_ABOUT[kind]),
        # i18n: the field names before the colons (prompt:, right:, …) stay in English
        t.gettext("Copy this, write your own text after each field name (keep the names), "
                  "leave out the lines you do not need and send it:"),
        "", *form])

"""GIFT, Moodle's text format for question banks (the most common one to exchange).

    // a comment
    $CATEGORY: $course$/top/Gradient accumulation

    ::ga-effective-batch::What is the effective batch of 4 steps of 8? {
    =32 #four times eight
    ~8
    ~12
    ####Accumulation sums the gradients of every micro-batch.
    }

    ::tf::Adam keeps two moments per parameter. {T}

Read: multiple choice (one `=`, the rest `~`; `~%100%` counts as `=`), several right answers
(`~%50%` twice and the wrong ones `~%-100%`: a multi, scored all or nothing), true/false
(`{T}`, `{TRUE}`, `{F}`, `{FALSE}`), numerical (`{#2.87:0.1}`, `{#2.7..3.0}`, `{#2.87}`: the
first answer), short answer (only `=`: the accepted forms of a text question), the "missing
word" form (text after the answers: the prompt shows `_____` where they stood), `::title::`
(the question's id when it makes one), `$CATEGORY` (one pack per category), comments, the
escapes `\\~ \\= \\# \\{ \\} \\:` and `\\n`, format markers (`[html]` text is reduced to plain
text, except that its code `<pre>` and formula `$$…$$` become the question's `code` and
`formula`, as the export writes them). Feedback: the general `####` feedback, else the right
answer's `#`, is the explanation. Skipped, each with its line: essay `{}`, matching (`->`),
descriptions (no answers). Refused: several answers at 100%, partial credit that does not add
up to 100%, no right answer; partial credit beside one right answer is dropped with a warning.
GIFT has no ordering question: an order question is left out of an export, said in a comment
in its place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import islice, pairwise

from bot.content import limits
from bot.content.formats.bank import Item, Report, html_media, html_text, keys_of, share, text_of
from bot.content.formats.media import prompt_html
from bot.content.items import Kind, Question, Quiz
from bot.content.problems import short

_ESCAPABLE = "~=#{}:\\"
_FORMAT = re.compile(r"\[(html|moodle|plain|markdown)\]", re.IGNORECASE)
_TRUE_FALSE = re.compile(r"(T|TRUE|F|FALSE)\s*(?=$|#)", re.IGNORECASE)
_ASKED = "multiple-choice, true/false, numerical and short-answer questions"
_WEIGHT = re.compile(r"%(-?\d+(?:\.\d+)?)%")


def _unescaped(text: str, chars: str) -> Iterable[int]:
    """Where `text` has one of `chars` not escaped by a backslash."""
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in chars:
            yield i
        i += 1


def _find(text: str, chars: str, start: int = 0) -> int:
    return next((i for i in _unescaped(text, chars) if i >= start), -1)


def _find_run(text: str, run: str, start: int = 0) -> int:
    """The first `run` ("::", "####") at or after `start` whose first character is not
    escaped (one pass: a file of many `#` stays linear)."""
    return next((i for i in _unescaped(text, run[0])
                 if i >= start and text.startswith(run, i)), -1)


def unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        char = match.group(1)
        return "\n" if char == "n" else char
    return re.sub(r"\\([~=#{}:\\n])", one, text)


def _plain(text: str, html: bool) -> str:
    """The text a reader sees: a line break in the file is a space (Moodle shows it as
    HTML), `\\n` is a line break."""
    text = unescape(re.sub(r"[ \t]*\r?\n[ \t]*", " ", text.strip()))
    return html_text(text) if html else "\n".join(line.strip() for line in text.split("\n"))


def _chunks(text: str) -> Iterable[tuple[int, list[str]]]:
    """Questions and category lines, each with the line it starts on: blank lines separate
    them, comment lines are dropped."""
    start, lines = 0, list[str]()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        if not stripped:
            if lines:
                yield start, lines
            start, lines = 0, []
            continue
        if stripped.upper().startswith("$CATEGORY:"):
            if lines:
                yield start, lines
            yield number, [stripped]
            start, lines = 0, []
            continue
        if not lines:
            start = number
        lines.append(line)
    if lines:
        yield start, lines


def read(data: bytes, report: Report) -> list[Item]:
    text = text_of(data, report)
    if text is None:
        return []
    items: list[Item] = []
    category = ""
    for line, lines in _chunks(text):
        if len(lines) == 1 and lines[0].upper().startswith("$CATEGORY:"):
            category = lines[0].split(":", 1)[1].strip()
            continue
        item = _question(line, "\n".join(lines).strip(), report)
        if item is not None:
            item.category = category
            items.append(item)
    return items


def _question(line: int, text: str, report: Report) -> Item | None:
    name = ""
    if text.startswith("::"):
        end = _find_run(text, "::", 2)
        if end < 0:
            report(line, "the title opened with :: is not closed with ::")
            return None
        name, text = unescape(text[2:end]).strip(), text[end + 2:].strip()
    html = False
    if fmt := _FORMAT.match(text):
        html = fmt.group(1).lower() in ("html", "moodle")
        text = text[fmt.end():]
    opening = _find(text, "{")
    if opening < 0:
        report(line, f"skipped: a description (no answers in {{…}}); quizbot asks {_ASKED}",
               warning=True)
        return None
    closing = _find(text, "}", opening)
    if closing < 0:
        report(line, "the answers opened with { are not closed with }")
        return None
    before, block, after = text[:opening], text[opening + 1: closing], text[closing + 1:]
    if _find(after, "{") >= 0:
        report(line, "skipped: several answer blocks {…} in one question (a cloze); quizbot "
               f"asks {_ASKED}", warning=True)
        return None
    media = None
    if html:  # code and a formula as the export writes them
        raw, media = html_media(unescape(re.sub(r"[ \t]*\r?\n[ \t]*", " ", before.strip())))
        prompt = html_text(raw)
    else:
        prompt = _plain(before, html)
    if after.strip():
        rest = _plain(after, html)
        space = "" if rest[:1] in ".,;:!?)" else " "
        prompt = f"{prompt} _____{space}{rest}".strip()
    item = _answers(line, prompt, block.strip(), name, html, report)
    if item is not None:
        item.media = media
    return item


def _answers(
    line: int, prompt: str, block: str, name: str, html: bool, report: Report
) -> Item | None:
    def skipped(kind: str) -> None:
        report(line, f"skipped: {kind}; quizbot asks {_ASKED}",
               warning=True)

    general = ""
    cut = _find_run(block, "####")
    if cut >= 0:
        general, block = _plain(block[cut + 4:], html), block[:cut].strip()
    if not block:
        skipped("an essay question ({})")
        return None
    if block.startswith("#"):
        return _numeric(line, prompt, block[1:], name, general, html, report)
    if tf := _TRUE_FALSE.match(block):
        right = tf.group(1).upper().startswith("T")
        rest = block[tf.end():]
        # {T#shown to a wrong answer#shown to the right one}
        feedback = [_plain(part, html) for part in _split(rest[1:], "#")] if rest else []
        explanation = general or next((f for f in reversed(feedback[:2]) if f), "")
        return Item(line, prompt, [], 0 if right else 1, explanation, name, kind="truefalse")
    starts = list(islice(_unescaped(block, "~="), limits.MAX_OPTIONS + 1))
    if not starts or (starts[0] != 0 and block[: starts[0]].strip()):
        report(line, f"the answers {short(block)!r} do not start with = (right) or ~ (wrong)")
        return None
    if len(starts) > limits.MAX_OPTIONS:
        report(line, f"more than {limits.MAX_OPTIONS} answers; a question has at most "
               f"{limits.MAX_OPTIONS}")
        return None
    options: list[str] = []
    feedbacks: list[str] = []
    credit: list[float] = []
    marks = ""
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(block)
        mark, answer = block[start], block[start + 1: end].strip()
        weight: float | None = None
        if w := _WEIGHT.match(answer):
            weight, answer = float(w.group(1)), answer[w.end():]
        parts = _split(answer, "#")
        options.append(_plain(parts[0], html))
        feedbacks.append(_plain(parts[1], html) if len(parts) > 1 else "")
        credit.append(weight if weight is not None else 100.0 if mark == "=" else 0.0)
        marks += mark
    empty = [n for n, option in enumerate(options, start=1) if not option]
    if "~" not in marks:
        if all("->" in option for option in options):
            skipped("a matching question (->)")
            return None
        if empty:
            report(line, f"answer {empty[0]} is empty")
            return None
        # short answer: every form at full credit is accepted
        forms = [o for o, c in zip(options, credit, strict=True) if c >= 100]
        return Item(line, prompt, [], -1, general or feedbacks[0], name, kind="text",
                    accept=forms or options[:1])
    keys = keys_of(credit, line, report, "mark it with = and the others with ~")
    if keys is None:
        return None
    if empty:
        report(line, f"answer {empty[0]} is empty")
        return None
    if len(keys) > 1:
        return Item(line, prompt, options, keys[0], general, name, kind="multi", answers=keys)
    return Item(line, prompt, options, keys[0], general or feedbacks[keys[0]], name)


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_TOLERANCE = re.compile(rf"=?(?:%100%)?\s*({_NUMBER})\s*(?::\s*({_NUMBER}))?\s*")
_RANGE = re.compile(rf"=?(?:%100%)?\s*({_NUMBER})\s*\.\.\s*({_NUMBER})\s*")


def _numeric(line: int, prompt: str, block: str, name: str, general: str, html: bool,
             report: Report) -> Item | None:
    """`{#2.87:0.1}`, `{#2.7..3.0}` or `{#2.87}`: the first answer (Moodle's `=` list of
    answers with partial credit keeps only the one at full credit, said)."""
    first, *others = [part for part in _split(block, "=") if part.strip()] or [""]
    answer, _, feedback = first.partition("#")
    numbers: dict[str, float] = {}
    if m := _RANGE.fullmatch(answer):
        low, high = float(m.group(1)), float(m.group(2))
        numbers = {"value": (low + high) / 2, "min": low, "max": high}
    elif m := _TOLERANCE.fullmatch(answer):
        numbers = {"value": float(m.group(1)), "tolerance": abs(float(m.group(2) or 0))}
    else:
        report(line, f"a numerical answer {short(answer)!r} is not a number, a number:tolerance "
               "or a min..max range")
        return None
    if others:
        report(line, "a numerical question with several answers: only the first is kept",
               warning=True)
    return Item(line, prompt, [], -1, general or _plain(feedback, html), name, kind="numeric",
                numeric=numbers)


def _split(text: str, char: str) -> list[str]:
    """`text` cut at each unescaped `char`."""
    cuts = [-1, *_unescaped(text, char), len(text)]
    return [text[a + 1: b] for a, b in pairwise(cuts)]


# --- writing ---------------------------------------------------------------------------------


def escape(text: str) -> str:
    out = "".join(f"\\{c}" if c in _ESCAPABLE else c for c in text)
    return out.replace("\r\n", "\n").replace("\n", "\\n")


def _answer(mark: str, text: str) -> str:
    # a text that starts like a weight (%50%) is given its weight explicitly
    weight = ("%100%" if mark == "=" else "%0%") if _WEIGHT.match(text) else ""
    return f"{mark}{weight}{escape(text)}"


def dump(quizzes: Iterable[Quiz], language: str) -> str:
    """The quizzes as GIFT in one language (a text it lacks falls back as the bot's does):
    one category per quiz, each question titled with its id, its explanation as the general
    feedback. A question with code or a formula is `[html]` (media.prompt_html); GIFT has
    no way to carry a file, so a picture is left out, nor a unit, nor an ordering question
    (a comment says so in its place). Several right answers share 100% and each wrong one
    takes -100%; a text question's Latin spellings are accepted forms beside the language's."""
    out = ["// quiz packs exported by `quizbot content export --format gift`", ""]
    for quiz in quizzes:
        title = quiz.title.get(language).replace("/", "∕")
        out += [f"// quiz {quiz.id}", f"$CATEGORY: $course$/top/{title}", ""]
        for q in quiz.questions:
            if q.kind is Kind.ORDER:
                out += [f"// left out: {q.id}, an order question (GIFT has no ordering)", ""]
                continue
            if q.code is not None or q.formula is not None:  # HTML; a picture is left out
                out.append(f"::{q.id}::[html]{escape(prompt_html(q, language))} {{")
            else:
                prompt = escape(q.prompt.get(language))
                out.append(f"::{q.id}::{'[plain]' if prompt.startswith('[') else ''}{prompt} {{")
            out += _key(q, language)
            out += [f"####{escape(q.explanation.get(language))}", "}", ""]
    return "\n".join(out)


def _key(q: Question, language: str) -> list[str]:
    """The answer block's lines of one question."""
    if q.kind is Kind.TRUEFALSE:
        return ["T" if q.answer == 0 else "F"]
    if q.kind is Kind.NUMERIC and q.numeric is not None:
        n = q.numeric
        if n.low + n.high == 2 * n.value:  # symmetric: a tolerance
            return [f"#{n.value:g}:{n.high - n.value:.10g}"]
        return [f"#{n.low:g}..{n.high:g}"]
    if q.kind is Kind.TEXT and q.accept is not None:
        forms = dict.fromkeys((*q.accept.forms(language), *q.accept.latin))
        return [_answer("=", form) for form in forms]
    if q.kind is Kind.MULTI:
        right, wrong = len(q.answers), len(q.options) - len(q.answers)
        return [f"~%{share(right)}%{escape(o.text.get(language))}" if i in q.answers
                else f"~%-{share(wrong)}%{escape(o.text.get(language))}"
                for i, o in enumerate(q.options)]
    return [_answer("=" if i == q.answer else "~", o.text.get(language))
            for i, o in enumerate(q.options)]

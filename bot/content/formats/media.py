"""A question's code, formula and picture in the exports' HTML (Moodle XML, GIFT, Anki).

The prompt is a paragraph; the code a `<pre><code class="language-X">` block (the class is
the language a highlighter such as Moodle's or Anki's add-ons reads); the formula TeX between
the delimiters the reader's MathJax takes (`$$…$$` in Moodle, `\\[…\\]` in Anki); the
picture an `<img>` whose `src` the format gives (Moodle: `@@PLUGINFILE@@/name` with the file
embedded in the question; Anki: a media file of the deck). bank.html_media reads the first
two back, and the picture from Moodle XML.
"""

from __future__ import annotations

import hashlib
import html
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from bot.content.items import Question, Quiz


@dataclass(frozen=True, slots=True)
class Picture:
    name: str  # a file name, unique per picture (its question and content)
    data: bytes


def picture(quiz: Quiz, question: Question, language: str) -> Picture | None:
    """The question's picture in `language` (None without one, or if its file is gone)."""
    path = quiz.image_path(question, language)
    if path is None:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()[:8]
    return Picture(f"{question.id}-{digest}{Path(path).suffix.lower()}", data)


def _paragraphs(text: str) -> str:
    return "<p>" + html.escape(text, quote=False).replace("\n", "<br>") + "</p>"


def prompt_html(question: Question, language: str, *, formula: tuple[str, str] = ("$$", "$$"),
                src: str | None = None) -> str:
    """The prompt, then the code, the formula (between `formula`'s delimiters) and the
    picture (`src`, when the format carries it) as HTML."""
    parts = [_paragraphs(question.prompt.get(language))]
    if question.code is not None:
        parts.append(f'<pre><code class="language-{html.escape(question.code.language)}">'
                     f"{html.escape(question.code.text.get(language), quote=False)}"
                     "</code></pre>")
    if question.formula is not None:
        opening, closing = formula
        parts.append(f"<p>{opening}{html.escape(question.formula.get(language), quote=False)}"
                     f"{closing}</p>")
    if src is not None:
        alt = question.image_alt.get(language) if question.image_alt is not None else ""
        parts.append(f'<p><img src="{html.escape(src)}" alt="{html.escape(alt)}"></p>')
    return "".join(parts)


def plugin_src(name: str) -> str:
    """Moodle's reference to a file embedded in the question's text."""
    return "@@PLUGINFILE@@/" + quote(name)

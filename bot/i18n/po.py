"""A `.po` catalog read into gettext's lookups without Babel.

Reading a catalog with Babel imports its message machinery and loads the locale's CLDR data
(about 2 MB that stay in the process); the bot needs only each entry's translation and the
`Plural-Forms` rule, which the catalog's header states (tests/test_i18n.py checks it follows
CLDR). This reads what Babel's `read_po` and `write_mo` (without fuzzy entries) would hand to
gettext, and tests/test_i18n.py checks that every entry comes out the same as through Babel.
"""

from __future__ import annotations

import gettext
import re
from collections.abc import Callable, Iterator
from pathlib import Path

_ESCAPE = re.compile(r'\\([\\abfnrtv"])')  # Babel's unescape: C's escapes, \\ and \"
_ESCAPED = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_KEYWORD = re.compile(r'(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")\s*$')


def _unquote(quoted: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPED.get(m[1], m[1]), quoted.strip()[1:-1])


def _entries(text: str) -> Iterator[tuple[set[str], dict[str, str], dict[int, str]]]:
    """(flags, {msgctxt/msgid/msgid_plural: text}, {form: msgstr}) of each entry that is not
    obsolete."""
    flags: set[str] = set()
    fields: dict[str, str] = {}
    forms: dict[int, str] = {}
    last: tuple[str, int | None] | None = None
    for line in [*text.splitlines(), ""]:
        line = line.strip()
        if line.startswith('"') and last is not None:
            name, form = last
            if form is None:
                fields[name] += _unquote(line)
            else:
                forms[form] += _unquote(line)
            continue
        if (not line or line.startswith("#")) and "msgid" in fields:
            yield flags, fields, forms
            flags, fields, forms, last = set(), {}, {}, None
        if line.startswith("#,"):
            flags |= {flag.strip() for flag in line[2:].split(",")}
        elif match := _KEYWORD.match(line):
            keyword, index, quoted = match.groups()
            if keyword.startswith("msgstr"):
                form = int(index) if index is not None else 0
                forms[form] = _unquote(quoted)
                last = ("msgstr", form)
            else:
                fields[keyword] = _unquote(quoted)
                last = (keyword, None)


class PoTranslations(gettext.NullTranslations):
    """gettext's GNUTranslations lookups over a catalog read from a `.po` file."""

    def __init__(self, messages: dict[str | tuple[str, int], str],
                 plural: Callable[[int], int]) -> None:
        super().__init__()
        self._messages = messages
        self.plural = plural

    def gettext(self, message: str) -> str:
        return self._messages.get(message, message)

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        found = self._messages.get((msgid1, self.plural(n)))
        if found is None:
            return msgid1 if n == 1 else msgid2
        return found


def read(path: Path) -> PoTranslations:
    """The catalog's translated entries: a fuzzy (unreviewed) or empty one is left out, and
    so is a plural one with an empty form (its English would be mixed with this language
    under this language's plural rule)."""
    messages: dict[str | tuple[str, int], str] = {}
    plural: Callable[[int], int] = lambda n: int(n != 1)  # noqa: E731 - gettext's default
    for flags, fields, forms in _entries(path.read_text(encoding="utf-8")):
        msgid = fields["msgid"]
        if msgid == "":  # the header
            found = re.search(r"^Plural-Forms:.*?plural=([^\n]*)", forms.get(0, ""), re.M)
            if found:
                plural = gettext.c2py(found[1].strip().rstrip(";"))
            continue
        if "fuzzy" in flags or "msgctxt" in fields:
            continue  # gettext() never finds an entry under a context
        if "msgid_plural" in fields:
            if forms and all(forms.values()):
                messages.update({(msgid, i): text for i, text in forms.items()})
        elif forms.get(0):
            messages[msgid] = forms[0]
    return PoTranslations(messages, plural)

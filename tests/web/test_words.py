"""Every word a dashboard template shows through `t("…")` is a msgid of the catalogs (the
extractor reads Python only: bot/web/words.py lists them), so Bengali and Hindi readers never
meet an English label the catalogs do not know."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po

import bot.web
from bot.i18n import LOCALE_DIR

TEMPLATES = Path(bot.web.__file__).parent / "templates"
CALL = re.compile(r"""\bt\((["'])(.+?)\1\)""")


def test_every_template_word_is_in_the_catalogs() -> None:
    with (LOCALE_DIR / "quizbot.pot").open("rb") as f:
        known = {m.id for m in read_po(f) if m.id}
    used = {match[1] for path in TEMPLATES.glob("*.html")
            for match in CALL.findall(path.read_text(encoding="utf-8"))}
    assert len(used) > 40
    assert sorted(used - known) == []

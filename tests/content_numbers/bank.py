"""A bundled pack as the number tests read it: its questions by id, a question's text, and
the check that a text states a figure (shared by every test_<pack>.py here)."""

from __future__ import annotations

from typing import Any

import yaml

from tests.conftest import BUNDLED


class Pack:
    def __init__(self, pack_id: str) -> None:
        self.data: dict[str, Any] = yaml.safe_load(
            (BUNDLED / f"{pack_id}.yaml").read_text(encoding="utf-8"))
        self.questions: dict[str, dict[str, Any]] = {
            q["id"]: q for q in self.data["questions"]}

    def text(self, qid: str, part: str, locale: str = "en") -> str:
        """A question's prompt, explanation or details; "options" joins every option, "key"
        is the correct one."""
        q = self.questions[qid]
        if part == "options":
            return "\n".join(o[locale] for o in q["options"])
        if part == "key":
            return str(next(o[locale] for o in q["options"] if o.get("correct")))
        return str(q[part][locale])

    def says(self, qid: str, part: str, *figures: str) -> None:
        """Each figure appears in the question's English `part`."""
        for figure in figures:
            assert figure in self.text(qid, part), f"{qid} {part}: {figure!r} not stated"

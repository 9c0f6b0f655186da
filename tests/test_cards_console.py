"""The console shows what a chat's card shows, as text: the code with its indentation (plain
when the output is not a terminal), the formula as TeX, the image by its file."""

from __future__ import annotations

import io
from pathlib import Path

from tests.test_console import play

CARDS = Path(__file__).parent / "data" / "cards"


def test_code_formula_and_image_are_printed_before_the_question(tmp_path: Path) -> None:
    result = play(tmp_path / "quiz.db", "", "play", "--quiz", "cards", content=CARDS)
    out = result.stdout
    assert "\x1b[" not in out  # not a terminal: no colour codes
    code = out.index("    for step, batch in enumerate(loader):")
    assert "            optimizer.step()" in out  # indentation kept
    assert "    $g = \\sum_{i=1}^{k} \\nabla L_i$" in out
    assert f"🖼  {CARDS / 'stages.png'}" in out
    assert code < out.index("What is wrong with this gradient accumulation loop?")


def test_code_is_highlighted_in_a_terminal() -> None:
    from bot.adapters.console import ConsoleQuiz
    from bot.core.models import ShownQuestion

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    quiz = ConsoleQuiz.__new__(ConsoleQuiz)
    quiz.out = out
    quiz.media(ShownQuestion(1, "console", "q", "Q", "q1", "?", ("a", "b"), 0, "", None, "en",
                             None, None, code="for x in y:\n    pass", code_language="python"))
    assert "\x1b[" in out.getvalue() and "    " in out.getvalue()

"""The console shows what a chat's card shows, as text: the code with its indentation (plain
when the output is not a terminal), the formula as Unicode text, the image by its file, between
the question's prompt and its options."""

from __future__ import annotations

import io
from pathlib import Path

from tests.test_console import play

CARDS = Path(__file__).parent / "data" / "cards"


def test_code_formula_and_image_are_printed_between_the_prompt_and_the_options(
    tmp_path: Path,
) -> None:
    result = play(tmp_path / "quiz.db", "", "play", "--quiz", "cards", content=CARDS)
    out = result.stdout
    assert "\x1b[" not in out  # not a terminal: no colour codes
    code = out.index("    for step, batch in enumerate(loader):")
    assert "            optimizer.step()" in out  # indentation kept
    assert "    g = ∑_(i=1)^k ∇L_i\n" in out  # what the card draws, not its TeX
    assert "\\sum" not in out
    assert f"🖼  {CARDS / 'stages.png'}" in out
    heading = out.index("question 1 of 1")
    prompt = out.index("What is wrong with this gradient accumulation loop?")
    assert heading < prompt < code < out.index("\nA) ")


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

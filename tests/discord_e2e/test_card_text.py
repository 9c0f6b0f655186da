"""A card's text on Discord: the code block, the formula and the picture's description in
the embed, the attachment's alt text, all within Discord's limits however long the code."""

from __future__ import annotations

from dataclasses import replace

from bot.adapters.discord.embeds import (
    DC_ATTACHMENT_DESCRIPTION,
    card_alt,
    card_text,
    closed_embed,
    code_block,
    question_embed,
)
from bot.content.limits import DC_EMBED_DESCRIPTION
from bot.core.models import PostSummary, ShownQuestion
from bot.i18n import translator

Q = ShownQuestion(
    post_id=1, chat_key="dc:1", quiz_id="q", quiz_title="Quiz", question_id="q1",
    prompt="What does it print?", options=("one", "two", "three"), correct=0,
    explanation="Because.", details=None, locale="en", number=None, total=None,
    code="print('hi')\n", code_language="python", formula="e^{i\\pi} + 1 = 0",
    image="diagram.png", image_alt="A pipeline of four stages",
)


def test_code_formula_and_picture_as_text() -> None:
    text = card_text(Q, translator("en"), 4000)
    assert text.startswith("```python\nprint('hi')\n```")
    assert "Formula: `e^{i\\pi} + 1 = 0`" in text
    assert "Picture: A pipeline of four stages" in text


def test_the_alt_text_says_everything_in_the_readers_language() -> None:
    alt = card_alt(replace(Q, locale="hi"), translator("hi"))
    assert "A pipeline of four stages" in alt and "print('hi')" in alt
    assert "e^{i\\pi} + 1 = 0" in alt
    assert "Picture" not in alt  # said in Hindi


def test_a_fence_in_the_code_cannot_close_the_block() -> None:
    block = code_block("x = '```'\ny = 1", "python", 200)
    assert block.count("```") == 2 and block.endswith("\n```")


def test_long_code_is_cut_at_a_line_and_still_fenced() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(2000))
    block = code_block(code, "python", 300)
    assert len(block) <= 300 and block.endswith("…\n```") and block.count("```") == 2
    assert "\nline_3 = 3\n" in block


def test_every_part_within_discords_limits() -> None:
    huge = replace(Q, code="x = 1\n" * 3000, formula="y" * 3000, image_alt="z" * 3000,
                   prompt="p" * 1000, options=tuple("o" * 300 for _ in range(10)))
    t = translator("en")
    embed = question_embed(huge, t, answered=3)
    assert embed.description is not None and len(embed.description) <= DC_EMBED_DESCRIPTION
    assert embed.description.endswith("o" * 300)  # the options are never cut for the card
    assert len(card_alt(huge, t)) <= DC_ATTACHMENT_DESCRIPTION
    summary = PostSummary(post_id=1, chat_key="dc:1", question=huge, answered=0, right=0,
                          per_option=(0,) * 10, fastest=())
    closed = closed_embed(summary, t)
    assert closed.description is not None and len(closed.description) <= DC_EMBED_DESCRIPTION
    assert len(closed) <= 6000


def test_no_card_no_text() -> None:
    plain = replace(Q, code=None, formula=None, image=None, image_alt=None)
    assert card_text(plain, translator("en"), 4000) == ""
    assert question_embed(plain, translator("en")).description == \
        "What does it print?\n\n**A)** one\n**B)** two\n**C)** three"

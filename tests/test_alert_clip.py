"""An alert's text cut to Telegram's 200 units at a sentence or a word, never mid-word."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.adapters.telegram.text import ELLIPSIS, alert_text, clip
from bot.content.limits import TG_ALERT, tg_len
from bot.core.models import AnswerResult, AnswerStatus
from bot.i18n import translator


def test_a_sentence_that_fits_is_kept_whole() -> None:
    text = "The first sentence is here. The second one goes on for a long while after it."
    assert clip(text, 40) == "The first sentence is here.…"


def test_without_a_sentence_end_the_cut_is_between_words() -> None:
    assert clip("alpha beta gamma delta epsilon", 14) == "alpha beta…"
    assert clip("এটি একটি দীর্ঘ বাক্য। এবং আরও অনেক কথা এখানে লেখা আছে", 30) == \
        "এটি একটি দীর্ঘ বাক্য।…"


@given(st.lists(st.text("abcdé😀", min_size=1, max_size=12), min_size=1, max_size=60),
       st.integers(8, 200))
def test_a_cut_ends_on_a_whole_word_within_the_limit(words: list[str], limit: int) -> None:
    text = " ".join(words)
    cut = clip(text, limit)
    assert tg_len(cut) <= limit
    if cut != text:
        kept = cut.removesuffix(ELLIPSIS).split()
        # a first word longer than the limit alone is all there is to cut
        assert kept == words[: len(kept)] or tg_len(words[0]) >= limit - 1


def test_a_long_alert_says_where_the_rest_is() -> None:
    t = translator("en")
    result = AnswerResult(AnswerStatus.ACCEPTED, 1, correct=True, correct_option=0,
                          correct_text="yes", explanation="Because it is so. " * 20)
    text = alert_text(result, t)
    assert tg_len(text) <= TG_ALERT
    assert text.endswith("…\nThe whole explanation comes when the question closes.")
    mine = alert_text(AnswerResult(**{**{f: getattr(result, f) for f in
                                         ("status", "post_id", "correct", "correct_option",
                                          "correct_text", "explanation")}, "personal": True}), t)
    assert mine.endswith("…\nThe whole explanation is below.")

"""The confidence tap (/settings confidence on), written once and run on both platforms: in a
private chat a press asks "How sure are you?" and records nothing until the tap, which
records the answer with it; off, the press answers at once. The rule of when to ask is the
core's (bot/core/confidence_ask.py): a question already answered is not asked again and the
first answer stands; a closed one is refused at once, in the reader's language; a forged tap
records nothing."""

from __future__ import annotations

from bot.core.models import Confidence
from bot.i18n import translator
from tests.behaviour.harness import ConfidenceHarness, Place, Seen

ASKED = "How sure are you?"
FINAL = "Your first answer is final."
CLOSED = "This question is closed; answers are no longer counted."


async def right_option(h: ConfidenceHarness, post_id: int) -> int:
    shown = await h.service.questions.show(post_id)
    assert shown is not None
    return shown.correct


async def stored(h: ConfidenceHarness, post_id: int, who: object) -> tuple[bool, int | None]:
    """The person's answer to the post: (right, confidence)."""
    answer = await h.service.storage.answer_of(post_id, h.person_key(who))
    assert answer is not None, f"no answer to post {post_id}"
    return answer.correct, answer.confidence


async def one_question(h: ConfidenceHarness, dm: Place, who: object) -> int:
    [post_id] = (await h.quiz(dm, who, "testing")).post_ids
    return post_id


def asked(seen: Seen) -> bool:
    return ASKED in seen.text


async def test_on_a_press_asks_and_the_tap_records_the_answer_with_it(
    h: ConfidenceHarness,
) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    await h.set_confidence(dm, alice, True)
    post = await one_question(h, dm, alice)
    seen = await h.answer(dm, alice, post, await right_option(h, post))
    assert asked(seen), seen.texts
    assert await h.service.storage.answer_of(post, h.person_key(alice)) is None  # not yet
    tapped = await h.tap_confidence(dm, alice, post, "Sure")
    assert "Correct" in tapped.text, tapped.texts
    assert await stored(h, post, alice) == (True, int(Confidence.SURE))


async def test_off_a_press_answers_at_once_with_no_confidence(h: ConfidenceHarness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    await h.set_confidence(dm, alice, True)
    await h.set_confidence(dm, alice, False)  # seen at once by the next press
    post = await one_question(h, dm, alice)
    seen = await h.answer(dm, alice, post, await right_option(h, post))
    assert not asked(seen) and "Correct" in seen.text, seen.texts
    assert await stored(h, post, alice) == (True, None)


async def test_an_answered_question_is_not_asked_again_and_the_first_answer_stands(
    h: ConfidenceHarness,
) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    await h.set_confidence(dm, alice, True)
    [first] = (await h.quiz(dm, alice, "sample")).post_ids  # a run: its questions stay open
    right = await right_option(h, first)
    assert asked(await h.answer(dm, alice, first, right))
    await h.tap_confidence(dm, alice, first, "Guessing")
    again = await h.answer(dm, alice, first, (right + 1) % 2)
    assert not asked(again) and FINAL in again.text, again.texts
    assert await stored(h, first, alice) == (True, int(Confidence.GUESSING))


async def test_a_closed_question_is_refused_at_once(h: ConfidenceHarness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    await h.set_confidence(dm, alice, True)
    old = await one_question(h, dm, alice)
    await one_question(h, dm, alice)  # replaces the first, which closes unanswered
    seen = await h.answer(dm, alice, old, await right_option(h, old))
    assert not asked(seen) and CLOSED in seen.text, seen.texts
    assert await h.service.storage.answer_of(old, h.person_key(alice)) is None


async def test_a_closed_question_is_refused_in_the_readers_language(
    h: ConfidenceHarness,
) -> None:
    alice = h.person(1, language="hi")
    dm = h.private(alice)
    await h.set_confidence(dm, alice, True)
    old = await one_question(h, dm, alice)
    await one_question(h, dm, alice)
    seen = await h.answer(dm, alice, old, await right_option(h, old))
    hindi = translator("hi")
    assert hindi.gettext(CLOSED) != CLOSED and hindi.gettext(CLOSED) in seen.text, seen.texts
    assert hindi.gettext(ASKED) not in seen.text


async def test_a_forged_tap_is_refused_and_records_nothing(h: ConfidenceHarness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    await h.set_confidence(dm, alice, True)
    post = await one_question(h, dm, alice)
    assert asked(await h.answer(dm, alice, post, 0))
    refused = await h.forged_tap(dm, alice, post)
    assert refused.text and "Correct" not in refused.text, refused.texts
    assert await h.service.storage.answer_of(post, h.person_key(alice)) is None
    # the real prompt still answers
    await h.tap_confidence(dm, alice, post, "Think so")
    assert (await stored(h, post, alice))[1] == int(Confidence.THINK_SO)

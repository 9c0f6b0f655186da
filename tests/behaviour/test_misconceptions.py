"""A chat's misconceptions in /analysis, written once and run on both platforms: people choose
distractors that stand for a misconception (`misconception:` in the pack); the admins'
/analysis names it with how many chose it of those who answered, how many of them were sure
(the confidence tap, in a private chat) and who; a member is refused and sees none of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.content import Catalog, load_catalog
from tests.behaviour.harness import ConfidenceHarness, Harness, Person, Place

PACK = """\
id: mc
title: Misconceptions
misconceptions:
  - id: free-lunch
    en: Memory savings cost nothing
    bn: মেমরি সাশ্রয়ের কোনো খরচ নেই
    hi: मेमोरी की बचत की कोई कीमत नहीं
  - id: more-is-faster
    en: A bigger batch always trains faster
    bn: বড় ব্যাচ সবসময় দ্রুত ট্রেন করে
    hi: बड़ा बैच हमेशा तेज़ ट्रेन करता है
questions:
  - id: mc-one
    prompt: What does recomputation cost?
    options:
      - en: Nothing at all
        misconception: free-lunch
      - en: Extra compute
        correct: true
      - en: Only time, and batches make it up
        misconception: more-is-faster
      - en: Accuracy
    explanation: It runs parts of the forward pass again.
"""
FREE_LUNCH = "“Memory savings cost nothing” (mc/free-lunch)"
FASTER = "(mc/more-is-faster)"


@pytest.fixture
def sample_catalog(tmp_path: Path) -> Catalog:
    """The service of these tests asks this pack (conftest's `service` takes it)."""
    (tmp_path / "mc.yaml").write_text(PACK, "utf-8")
    return load_catalog(tmp_path / "mc.yaml")


async def choose(h: Harness, where: Place, who: Person, post_id: int, canonical: int) -> None:
    """Answer the option the pack lists at `canonical`, wherever the post shows it."""
    post = await h.service.storage.get_post(post_id)
    assert post is not None
    await h.answer(where, who, post_id, post.order.index(canonical))


async def name(h: Harness, who: Person) -> str:
    found = await h.service.storage.person_name(h.person_key(who))
    assert found
    return found


async def test_admins_see_who_chose_a_misconception_and_members_do_not(h: Harness) -> None:
    group = h.group()
    alice, bob, chandra, dev = (h.person(n) for n in range(1, 5))
    h.make_admin(alice)
    [post] = (await h.quiz(group, alice, "mc")).post_ids
    await choose(h, group, bob, post, 0)  # free-lunch
    await choose(h, group, chandra, post, 1)  # right
    await choose(h, group, dev, post, 0)  # free-lunch

    refused = await h.analysis(group, bob)
    assert "Only this chat's admins can see its item analysis." in refused.text
    assert "free-lunch" not in refused.text and "Misconceptions" not in refused.text

    lines = (await h.analysis(group, alice)).text.splitlines()
    at = lines.index(f"• {FREE_LUNCH}")
    assert lines[at + 1] == "chosen by 2 of 3 · sure: 0", lines
    assert lines[at + 2] == f"who: {', '.join(sorted([await name(h, bob), await name(h, dev)]))}"
    assert not any(FASTER in line for line in lines), "nobody chose that one"
    assert any(line.startswith("🧩 Misconceptions") for line in lines)


async def test_a_sure_answer_counts_as_held_confidently(h: ConfidenceHarness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    await h.set_confidence(dm, alice, True)
    [post] = (await h.quiz(dm, alice, "mc")).post_ids
    await choose(h, dm, alice, post, 2)  # more-is-faster, then "How sure are you?"
    await h.tap_confidence(dm, alice, post, "Sure")

    lines = (await h.analysis(dm, alice)).text.splitlines()  # her own chat is hers
    at = next(i for i, line in enumerate(lines) if line.endswith(FASTER))
    assert lines[at + 1:at + 3] == ["chosen by 1 of 1 · sure: 1",
                                    f"who: {await name(h, alice)} (sure)"], lines
    assert FREE_LUNCH not in "\n".join(lines)

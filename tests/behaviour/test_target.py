"""/settings target (questions at the right difficulty, bot/core/difficulty.py), written once
and run on both platforms: only admins change it, a rate outside 50 to 95 is explained and
changes nothing, and the settings show it."""

from __future__ import annotations

from tests.behaviour.harness import Harness


async def test_only_admins_set_the_target_success_rate_from_50_to_95(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    h.make_admin(alice)
    await h.quiz(group, bob)  # the chat exists
    shown = await h.change_settings(group, bob)
    assert "Someone alone gets questions they should get right 75% of the time (the default)" \
        in shown.text
    refused = await h.change_settings(group, bob, target=80)
    assert "Only this chat's admins can change its settings." in refused.text
    done = await h.change_settings(group, alice, target=80)
    assert "Someone alone gets questions they should get right 80% of the time" in done.text
    assert "80% of the time (the default)" not in done.text
    bad = await h.change_settings(group, alice, target=40)
    assert ("“40” is not a success rate from 50 to 95: /settings target 75, for example "
            "(percent).") in bad.text
    again = await h.change_settings(group, bob)
    assert "right 80% of the time" in again.text

"""/dashboard on both platforms: an admin gets a signed link to the chat's dashboard where
only they see it (Telegram: their private chat; Discord: ephemeral), a member is refused with
the usual words and gets no link, and /dashboard revoke ends the chat's links."""

from __future__ import annotations

from bot.core.dashboard import DashboardAccess, Denied
from tests.behaviour.harness import Harness

SECRET = "behaviour-" + "k" * 40


def switch_on(h: Harness) -> DashboardAccess:
    service = h.service
    service.dashboard = DashboardAccess(service.storage, service.clock, SECRET,
                                        "https://quiz.example")
    return service.dashboard


async def test_a_member_is_refused_and_gets_no_link(h: Harness) -> None:
    switch_on(h)
    group, bob = h.group(), h.person(2)
    await h.quiz(group, bob)  # the chat exists
    seen = await h.dashboard(group, bob)
    assert "Only this chat's admins can open its dashboard." in seen.text
    assert "https://quiz.example/open/" not in seen.text
    revoked = await h.dashboard(group, bob, revoke=True)
    assert "Only this chat's admins can open its dashboard." in revoked.text


async def test_an_admin_gets_a_link_privately_and_can_revoke_it(h: Harness) -> None:
    access = switch_on(h)
    group, alice = h.group(), h.person(1)
    h.make_admin(alice)
    await h.quiz(group, alice)
    seen = await h.dashboard(group, alice)
    [line] = [w for w in seen.text.split() if w.startswith("https://quiz.example/open/")]
    token = line.removeprefix("https://quiz.example/open/")
    grant = await access.grant_of("link", token)
    assert grant.chat_key != h.person_key(alice)  # the group's, not the admin's private chat
    revoked = await h.dashboard(group, alice, revoke=True)
    assert "has ended" in revoked.text
    try:
        await access.grant_of("link", token)
    except Denied as denied:
        assert denied.reason == "revoked"
    else:
        raise AssertionError("a revoked link still opens the dashboard")

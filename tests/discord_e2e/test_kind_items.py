"""The kinds' components as built, before any request: custom_ids within Discord's 100
characters with the longest ids, the order picker within Components V2's limits, orders
that are not part of a permutation refused."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import discord
import pytest

from bot.adapters.discord.kinds import (
    KindItems,
    menu_id,
    order_id,
    parse_sequence,
    typed_id,
)
from bot.content.items import Kind
from bot.core.models import ShownQuestion
from bot.i18n import translator
from tests.fakes import discord_limits

LONGEST = 10**20 - 1  # the largest 20-digit snowflake or post id

ORDER = ShownQuestion(
    post_id=LONGEST, chat_key="dc:1", quiz_id="q", quiz_title="Quiz", question_id="q1",
    prompt="p" * 2000, options=tuple("o" * 500 for _ in range(6)), correct=-1,
    explanation="", details=None, locale="en", number=None, total=None, kind=Kind.ORDER,
    correct_set=(3, 1, 0, 5, 2, 4),
)


def test_custom_ids_fit_with_the_longest_ids() -> None:
    for value in (menu_id(LONGEST), typed_id(LONGEST),
                  order_id(LONGEST, LONGEST, "012345", "s"), f"qtm:{LONGEST}"):
        assert len(value) <= 100, value


@pytest.mark.parametrize(("seq", "size", "expected"), [
    ("", 4, ()), ("201", 4, (2, 0, 1)), ("3210", 4, (3, 2, 1, 0)),
    ("00", 4, None), ("4", 4, None), ("0123", 3, None),
])
def test_only_the_start_of_a_permutation_is_an_order(
    seq: str, size: int, expected: tuple[int, ...] | None
) -> None:
    assert parse_sequence(seq, size) == expected


@pytest.mark.parametrize("placed", [0, 3, 6])
def test_the_picker_stays_within_components_v2s_limits(placed: int) -> None:
    items = KindItems(answers=None, intake=None)
    view = items.picker(ORDER, LONGEST, ORDER.correct_set[:placed], translator("bn"))
    payload = {"flags": discord_limits.IS_COMPONENTS_V2, "components": view.to_components()}
    discord_limits.message(payload)  # raises FormError on any limit broken
    ids = [c["custom_id"] for c in _walk(payload["components"]) if "custom_id" in c]
    assert len(ids) == len(set(ids)) and all(len(i) <= 100 for i in ids)
    left = [i for i in ids if not i.endswith((":s", ":n"))]
    assert len(left) == 6 - placed  # a button per item not yet placed


def _walk(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for c in components:
        found.append(c)
        found += _walk(c.get("components") or [])
    return found


def test_a_question_of_each_kind_has_its_component() -> None:
    items = KindItems(answers=None, intake=None)
    for kind in (Kind.MULTI, Kind.NUMERIC, Kind.TEXT, Kind.ORDER):
        view = discord.ui.View(timeout=None)
        q = replace(ORDER, kind=kind, options=ORDER.options[:4], correct_set=(0, 2),
                    prompt="p")
        assert items.add_to(view, q)
        [component] = view.to_components()[0]["components"]
        assert len(component["custom_id"]) <= 100
    assert not items.add_to(discord.ui.View(), replace(ORDER, kind=Kind.CHOICE))

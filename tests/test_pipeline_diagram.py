"""The 1F1B diagram (content/images/pipeline-1f1b.png, drawn by scripts/draw_1f1b.py) is
readable where it is shown: a question card draws it at most 752 px wide, and there its
smallest text (a block's number, a row's name, the legend) is at least 18 px."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from PIL import Image

from bot.reports.card import WIDTH, _picture
from bot.reports.png import PAD

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "content" / "images" / "pipeline-1f1b.png"


def script() -> Any:
    spec = importlib.util.spec_from_file_location("draw_1f1b", ROOT / "scripts" / "draw_1f1b.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_picture_is_the_scripts_drawing(tmp_path: Path) -> None:
    draw = script()
    draw.OUT = tmp_path / "pipeline-1f1b.png"
    draw.main()
    with Image.open(draw.OUT) as fresh, Image.open(PICTURE) as committed:
        assert fresh.size == committed.size  # the same layout: the constants below hold


def test_its_smallest_text_is_18_px_where_a_card_shows_it() -> None:
    draw = script()
    assert draw.SHOWN_WIDTH == WIDTH - 2 * PAD
    shown = _picture(str(PICTURE), WIDTH - 2 * PAD)
    with Image.open(PICTURE) as image:
        scale = shown.width / image.width
    assert shown.width == WIDTH - 2 * PAD  # drawn across the card, not limited by its height
    assert min(draw.LABEL, draw.LEGEND) * scale >= draw.MIN_SHOWN == 18

"""Draw the 1F1B pipeline schedule the pipeline-parallelism and activation-memory packs show
(content/images/pipeline-1f1b.png): 4 stages, 8 micro-batches, a backward taking twice as
long as a forward. Run once; the PNG is committed beside the packs.

    .venv/bin/python scripts/draw_1f1b.py

Every text is at least MIN_SHOWN px tall where the picture is shown (a question card draws
it SHOWN_WIDTH px wide): 34 time units across that width leave about 21 px a forward, too
narrow for "F1" at that size, so a block carries its micro-batch's number, a forward is blue
and one unit wide, a backward green and two, and the legend says so (Megatron-LM's 1F1B
figure is labelled the same way). Drawn at twice that width, so it stays sharp where it is
shown larger.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from bot.reports import fonts

STAGES, MICRO = 4, 8
F, B = 1, 2  # time units
SCALE = 2  # drawn at twice the size it is read at
UNIT, ROW, LEFT, TOP, RIGHT = 21 * SCALE, 42 * SCALE, 80 * SCALE, 44 * SCALE, 8 * SCALE
LABEL = 22 * SCALE  # a block's number and a row's name
LEGEND = 20 * SCALE
SHOWN_WIDTH = 752  # a question card's picture (bot/reports/card.py: WIDTH less its padding)
MIN_SHOWN = 18  # px: the smallest text where it is shown
FORWARD, BACKWARD, IDLE, INK = "#90caf9", "#a5d6a7", "#eceff1", "#212121"
OUT = Path(__file__).resolve().parent.parent / "content" / "images" / "pipeline-1f1b.png"
# a clear sans face of the same family as the cards' first, condensed to fit a block
CONDENSED = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed.ttf")


def order(stage: int) -> list[tuple[str, int]]:
    """1F1B on one stage: warm-up forwards, then one forward and one backward in turn, then
    the remaining backwards."""
    warm = min(STAGES - stage - 1, MICRO)
    ops = [("F", i) for i in range(warm)]
    f, b = warm, 0
    while f < MICRO:
        ops += [("F", f), ("B", b)]
        f, b = f + 1, b + 1
    ops += [("B", i) for i in range(b, MICRO)]
    return ops


def schedule() -> dict[tuple[str, int, int], tuple[int, int]]:
    """(kind, stage, micro-batch) -> (start, end): each op starts once its stage is free and
    its input arrived (the previous stage's forward, the next stage's backward)."""
    done: dict[tuple[str, int, int], tuple[int, int]] = {}
    queues = [order(s) for s in range(STAGES)]
    free = [0] * STAGES
    while any(queues):
        for s in range(STAGES):
            if not queues[s]:
                continue
            kind, i = queues[s][0]
            need = (("F", s - 1, i) if s else None) if kind == "F" else (
                ("B", s + 1, i) if s < STAGES - 1 else ("F", s, i))
            if need is not None and need not in done:
                continue
            start = max(free[s], done[need][1] if need else 0)
            end = start + (F if kind == "F" else B)
            done[(kind, s, i)] = (start, end)
            free[s] = end
            queues[s].pop(0)
    return done


def face() -> str:
    return str(CONDENSED) if CONDENSED.exists() else fonts.faces()[0].path


def main() -> None:
    ops = schedule()
    total = max(end for _, end in ops.values())
    width, height = LEFT + total * UNIT + RIGHT, TOP + STAGES * ROW + 4 * SCALE
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    label = ImageFont.truetype(face(), LABEL)
    legend = ImageFont.truetype(face(), LEGEND)
    x: float = LEFT
    for fill, units, text in ((FORWARD, F, "F: forward"), (BACKWARD, B, "B: backward")):
        draw.rectangle((x, 8 * SCALE, x + units * UNIT, TOP - 10 * SCALE), fill=fill)
        x += units * UNIT + 6 * SCALE
        draw.text((x, (TOP - 2 * SCALE) / 2), text, font=legend, fill=INK, anchor="lm")
        x += draw.textlength(text, font=legend) + 24 * SCALE
    draw.text((x, (TOP - 2 * SCALE) / 2), "1 to 8: the micro-batch", font=legend, fill=INK,
              anchor="lm")
    for s in range(STAGES):
        y = TOP + s * ROW
        draw.text((4 * SCALE, y + (ROW - 4 * SCALE) / 2), f"GPU {s}", font=label, fill=INK,
                  anchor="lm")
        draw.rectangle((LEFT, y, LEFT + total * UNIT, y + ROW - 6 * SCALE), fill=IDLE)
    for (kind, s, i), (start, end) in ops.items():
        y = TOP + s * ROW
        box = (LEFT + start * UNIT + SCALE, y, LEFT + end * UNIT - SCALE, y + ROW - 6 * SCALE)
        draw.rectangle(box, fill=FORWARD if kind == "F" else BACKWARD)
        draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), str(i + 1),
                  font=label, fill=INK, anchor="mm")
    OUT.parent.mkdir(exist_ok=True)
    image.save(OUT, optimize=True)
    shown = min(LABEL, LEGEND) * SHOWN_WIDTH / width
    print(f"{OUT.name}: {width}x{height}, {total} time units; "
          f"smallest text {shown:.1f} px where a card shows it {SHOWN_WIDTH} px wide")


if __name__ == "__main__":
    main()

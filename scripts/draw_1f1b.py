"""Draw the 1F1B pipeline schedule the pipeline-parallelism and activation-memory packs show
(content/images/pipeline-1f1b.png): 4 stages, 8 micro-batches, a backward taking twice as
long as a forward. Run once; the PNG is committed beside the packs.

    .venv/bin/python scripts/draw_1f1b.py
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from bot.reports import fonts

STAGES, MICRO = 4, 8
F, B = 1, 2  # time units
UNIT, ROW, LEFT, TOP = 22, 40, 60, 16
FORWARD, BACKWARD, IDLE, INK = "#90caf9", "#a5d6a7", "#eceff1", "#212121"
OUT = Path(__file__).resolve().parent.parent / "content" / "images" / "pipeline-1f1b.png"


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


def main() -> None:
    ops = schedule()
    total = max(end for _, end in ops.values())
    width, height = LEFT + total * UNIT + 16, TOP + STAGES * ROW + 12
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    face = fonts.faces()[0].path
    font = ImageFont.truetype(face, 15)
    for s in range(STAGES):
        y = TOP + s * ROW
        draw.text((12, y + ROW / 2 - 4), f"GPU {s}", font=font, fill=INK, anchor="lm")
        draw.rectangle((LEFT, y + 4, LEFT + total * UNIT, y + ROW - 8), fill=IDLE)
    for (kind, s, i), (start, end) in ops.items():
        y = TOP + s * ROW
        box = (LEFT + start * UNIT + 1, y + 4, LEFT + end * UNIT - 1, y + ROW - 8)
        draw.rectangle(box, fill=FORWARD if kind == "F" else BACKWARD)
        draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), f"{kind}{i + 1}",
                  font=font, fill=INK, anchor="mm")
    OUT.parent.mkdir(exist_ok=True)
    image.save(OUT, optimize=True)
    print(f"{OUT.name}: {width}x{height}, {total} time units")


if __name__ == "__main__":
    main()

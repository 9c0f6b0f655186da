"""`quizbot run` with hostile pictures: one that passes every check but draws slowly, where
SIGTERM in the middle of drawing its card stops the bot within 15 s (Docker's stop timeout is
10 s, a supervisor's rarely more) with exit 0 and the drawing process goes with it; and a PNG
claiming 20000x20000 pixels, logged in one line and left out while the bot starts."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from bot.content.schema import QuestionModel
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.telegram_e2e.test_daemon import WITHIN, quizbot_run
from tests.test_hostile_images import slow_svg


def pack(folder: Path) -> Path:
    folder.mkdir()
    (folder / "slow.svg").write_bytes(slow_svg(60))
    alt = "    image_alt: a picture\n" if "image_alt" in QuestionModel.model_fields else ""
    (folder / "slow.yaml").write_text(
        "id: slow\ntitle: Slow\nquestions:\n  - id: slow-1\n    prompt: What is drawn?\n"
        f"    image: slow.svg\n{alt}    options:\n      - text: Lines\n        correct: true\n"
        "      - Dots\n    explanation: Dashed lines.\n")
    return folder


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                found.append((int(stat.parent.name), command.decode(errors="replace")))
        except (OSError, IndexError, ValueError):
            continue
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


async def test_sigterm_mid_drawing_stops_the_bot_and_its_drawing_process(
        fake_tg: FakeTelegramAPI, tmp_path: Path) -> None:
    proc = await quizbot_run(tmp_path, fake_tg, QUIZBOT_CONTENT_DIR=str(pack(tmp_path / "c")),
                             QUIZBOT_CACHE_DIR=str(tmp_path / "cache"))
    try:
        await fake_tg.wait_for("getUpdates", within=WITHIN)
        user = fake_tg.user(5, "Ada")
        fake_tg.command(fake_tg.private_chat(user), user, "/quiz slow")
        deadline = time.monotonic() + WITHIN
        drawing: list[int] = []
        while not drawing and time.monotonic() < deadline:
            drawing = [pid for pid, command in children(proc.pid)
                       if "multiprocessing" in command and alive(pid)]
            await asyncio.sleep(0.05)  # polled: the bot says nothing when it starts drawing
        assert drawing, "the card was never drawn"  # its child starts with its drawing
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), WITHIN)
        assert time.monotonic() - stopped < 15, err.decode()
        assert proc.returncode == 0, err.decode()
        assert "Traceback" not in err.decode()
        for _ in range(100):
            if not alive(drawing[0]):
                break
            await asyncio.sleep(0.05)
        assert not alive(drawing[0])
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_a_bad_image_is_logged_and_left_out_and_the_bot_starts(
        fake_tg: FakeTelegramAPI, tmp_path: Path) -> None:
    from tests.test_hostile_images import hostile_pack

    proc = await quizbot_run(tmp_path, fake_tg,
                             QUIZBOT_CONTENT_DIR=str(hostile_pack(tmp_path / "c")),
                             QUIZBOT_CACHE_DIR=str(tmp_path / "cache"))
    try:
        await fake_tg.wait_for("getUpdates", within=WITHIN)  # it started: no exit 1
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), WITHIN)
        assert proc.returncode == 0, err.decode()
        text = err.decode()
        assert "Traceback" not in text and "DecompressionBomb" not in text
        [line] = [x for x in text.splitlines() if "bomb.png" in x]
        assert "hostile.yaml:6: warning:" in line and "20000x20000" in line
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()

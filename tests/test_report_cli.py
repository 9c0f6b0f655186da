"""`quizbot report [--chat] [--quiz] [--png FILE]`: the item-analysis table and chart (bot/reports),
from answers stored through the real SQLite storage, rendered headless."""

from __future__ import annotations

import asyncio
import os
import struct
import subprocess
import sys
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.item_stats import analyse_quiz
from bot.core.ports import AnswerRecord
from bot.reports import chart_png, chart_size, report_text
from bot.storage import SqliteStorage, migrate_database
from tests.test_item_stats import SMALL, SMALL_ANSWERS, flags_answers, quiz

PACK = """\
id: four
title: {en: Four Options}
questions:
  - id: f-easy
    prompt: Which of these is the easy one, the question every single person gets right?
    options: [{en: This one, correct: true}, Not this, Nor this, Nor that]
    explanation: It says so.
  - id: f-trap
    prompt: Which option do people fall for?
    options: [{en: The answer, correct: true}, The trap, Another, Last]
    explanation: The trap is tempting.
  - id: f-quiet
    prompt: Nobody answers this one.
    options: [{en: A, correct: true}, B]
    explanation: Nobody came.
"""


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature, the chunk's
    CRC and that the file ends with IEND: no image library needed."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    body = data[16:16 + length]
    (crc,) = struct.unpack(">I", data[16 + length:20 + length])
    assert zlib.crc32(kind + body) == crc, "IHDR CRC mismatch"
    assert data[-12:] == b"\x00\x00\x00\x00IEND\xaeB`\x82", "no IEND at the end"
    width, height = struct.unpack(">II", body[:8])
    return width, height


def env(tmp_path: Path) -> dict[str, str]:
    clean = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_")) and k != "DISPLAY"
    }
    database = tmp_path / "quiz.db"
    if not database.exists():  # the reading commands refuse a file that is not there
        asyncio.run(migrate_database(database))
    return {**clean, "QUIZBOT_DATABASE": str(database),
            "QUIZBOT_CONTENT_DIR": str(tmp_path / "content")}


def quizbot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, timeout=120,
        cwd=tmp_path, env=env(tmp_path),
    )


async def seed(tmp_path: Path) -> None:
    """Twelve people in tg:-1 answer f-easy (all right) and f-trap (4 right, 8 fall for the
    trap, option B), each on a post with its own shuffle; one person in dc:2 answers f-easy
    wrong. The stored options are canonical, whatever was shown."""
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "four.yaml").write_text(PACK, encoding="utf-8")
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    storage = SqliteStorage(tmp_path / "quiz.db")
    await storage.open()
    try:
        for chat in ("tg:-1", "dc:2"):
            await storage.upsert_chat(chat, chat)
        shuffles = [(0, 1, 2, 3), (3, 2, 1, 0), (1, 3, 0, 2)]
        plan = [("tg:-1", f"tg:{p}", "f-easy", 0, 2000 + 200 * p) for p in range(12)]
        plan += [("tg:-1", f"tg:{p}", "f-trap", 0 if p < 4 else 1, 5000) for p in range(12)]
        plan += [("dc:2", "dc:9", "f-easy", 3, 9000)]
        for i, (chat, person, question, option, ms) in enumerate(plan):
            when = t0 + timedelta(minutes=i)
            post = await storage.create_post(chat, "four", question, shuffles[i % 3], "en", when)
            outcome, _ = await storage.record_answer(
                AnswerRecord(post.id, person, option, option == 0, when, ms, name=person)
            )
            assert outcome == "inserted"
    finally:
        await storage.close()


async def test_report_table_and_chart_for_one_chat(tmp_path: Path) -> None:
    await seed(tmp_path)
    chart = tmp_path / "chart.png"
    proc = quizbot(tmp_path, "report", "--chat", "tg:-1", "--png", str(chart))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == ("Item analysis (chat tg:-1, all quizzes): each person's first answer "
                        "to each question")
    assert "Four Options (four): 12 people, 24 answers" in lines
    header = next(line for line in lines if line.startswith("question"))
    assert header.split() == ["question", "prompt", "n", "right", "A", "B", "C", "D", "disc",
                              "median", "flags"]
    easy = next(line for line in lines if line.startswith("f-easy"))
    # the prompt cut to 30 characters; 12 answers, all right, the correct option starred
    assert "  Which of these is the easy on…  " in easy
    assert easy.split()[:3] + easy.split()[8:12] == ["f-easy", "Which", "of", "12", "100%",
                                                     "*100%", "0%"]
    # f-easy: nobody wrong, so no discrimination; median of 2.0, 2.2, ... 4.2 s: 3.1 s
    assert easy.split()[11:] == ["0%", "0%", "0%", "-", "3.1s", "too", "easy"]
    # f-trap: everyone's score on the other question (f-easy) is the same: no discrimination
    trap = next(line for line in lines if line.startswith("f-trap"))
    assert trap.split()[-13:] == ["12", "33%", "*33%", "67%", "0%", "0%", "-", "5.0s",
                                  "distractor", "B", "beats", "the", "answer"]
    quiet = next(line for line in lines if line.startswith("f-quiet"))
    assert quiet.split()[-6:] == ["0", "-", "*-", "-", "-", "-"]
    assert lines[-1] == f"chart: {chart}"

    assert png_size(chart.read_bytes()) == (720, 702)  # one quiz of 3 questions, 10 options


async def test_report_all_chats_counts_the_other_chat(tmp_path: Path) -> None:
    await seed(tmp_path)
    proc = quizbot(tmp_path, "report", "--quiz", "four")
    assert proc.returncode == 0, proc.stderr
    easy = next(line for line in proc.stdout.splitlines() if line.startswith("f-easy"))
    assert easy.split()[-10:] == ["13", "92%", "*92%", "0%", "0%", "8%", "-", "3.2s", "too",
                                  "easy"]  # dc:9 chose D, in 9 s
    assert "too easy" in easy  # 12/13 = 92% > 90%


def test_report_unknown_quiz_and_no_answers(tmp_path: Path) -> None:
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "four.yaml").write_text(PACK, encoding="utf-8")
    proc = quizbot(tmp_path, "report", "--quiz", "nope")
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"quizbot: no quiz 'nope' in {tmp_path / 'content'}"
    proc = quizbot(tmp_path, "report", "--png", str(tmp_path / "empty.png"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Item analysis (all chats, all quizzes): no answers yet.")
    assert png_size((tmp_path / "empty.png").read_bytes()) == chart_size([]) == (720, 144)


def test_report_png_unwritable(tmp_path: Path) -> None:
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "four.yaml").write_text(PACK, encoding="utf-8")
    proc = quizbot(tmp_path, "report", "--png", str(tmp_path / "no" / "such" / "dir.png"))
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"quizbot: cannot write {tmp_path / 'no' / 'such' / 'dir.png'}")


def test_pillow_is_loaded_only_to_draw(tmp_path: Path) -> None:
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "four.yaml").write_text(PACK, encoding="utf-8")
    script = (
        "import sys\n"
        "from bot.cli import main\n"
        "import bot.app, bot.reports\n"
        "assert main(['report']) == 0\n"
        "print('PIL.ImageDraw' in sys.modules)\n"
        "main(['report', '--png', 'x.png'])\n"
        "print('PIL.ImageDraw' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [lines[1], lines[-2], lines[-1]] == ["False", "chart: x.png", "True"]


# --- rendering, in process ----------------------------------------------------------------------


def test_text_of_the_hand_computed_examples() -> None:
    reports = [analyse_quiz(SMALL, SMALL_ANSWERS),
               analyse_quiz(quiz("flags", [0, 0, 0, 0]), flags_answers())]
    lines = report_text(reports).splitlines()
    assert "Quiz small (small): 6 people, 16 answers" in lines
    row = {line.split()[0]: line for line in lines if line.startswith(("small-", "flags-"))}
    assert row["small-q1"].split()[3:] == ["5", "60%", "*60%", "20%", "20%", "0%", "+0.41",
                                           "5.0s"]
    assert row["small-q3"].split()[3:] == ["6", "67%", "0%", "0%", "*67%", "33%", "-0.33",
                                           "3.5s"]
    assert row["flags-q1"].endswith("too easy")
    assert row["flags-q2"].endswith("too hard, distractor B beats the answer")
    assert row["flags-q3"].endswith("distractor B beats the answer, negative discrimination")
    assert row["flags-q4"].split()[3:] == ["10", "70%", "*70%", "0%", "0%", "30%", "-0.92",
                                           "1.0s", "negative", "discrimination"]
    assert lines[-1] == "Flags need at least 10 answers."


@pytest.mark.parametrize(
    ("quizzes", "questions", "size"),
    [(0, 0, (720, 144)), (1, 4, (720, 1000)), (3, 8, (720, 5372)), (1, 20, (720, 4424))],
)
def test_chart_is_a_png_of_the_expected_size(
    quizzes: int, questions: int, size: tuple[int, int]
) -> None:
    reports = [
        analyse_quiz(quiz(f"z{n}", [i % 4 for i in range(questions)]), [])
        for n in range(quizzes)
    ]
    assert chart_size(reports) == size
    assert png_size(chart_png(reports)) == size


def test_chart_of_answers_differs_from_an_empty_one() -> None:
    small = analyse_quiz(SMALL, SMALL_ANSWERS)
    empty = analyse_quiz(SMALL, [])
    assert chart_png([small]) != chart_png([empty])


# --- every kind of question -----------------------------------------------------------------

KINDS = Path(__file__).parent / "data" / "kinds" / "kinds.yaml"


async def seed_kinds(tmp_path: Path) -> None:
    """Seven people in tg:-1 answer the kinds pack's select-all, number, text and order
    questions, stored as the bot stores them (option -1, the canonical response)."""
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "kinds.yaml").write_bytes(KINDS.read_bytes())
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    # (question, response, right) per person: the multi's key is 0, 1, 3; 0.4 ± 0.05 GB
    given = {
        "k-multi": [("0,1,3", True)] * 3 + [("0,2", False)] * 4,
        "k-num": [("0.4", True)] * 3 + [("0.42", True), ("4", False), ("4", False),
                                       ("40", False)],
        "k-text": [("recomputation", True)] * 2 + [("checkpointing", False)] * 5,
        "k-order": [("0,1,2,3", True)] * 2 + [("1,0,2,3", False)] * 4 + [("3,2,1,0", False)],
    }
    storage = SqliteStorage(tmp_path / "quiz.db")
    await storage.open()
    try:
        await storage.upsert_chat("tg:-1", "tg:-1")
        for i, (question, answers) in enumerate(given.items()):
            when = t0 + timedelta(minutes=i)
            post = await storage.create_post("tg:-1", "kinds", question, (3, 1, 0, 2), "en",
                                             when)
            for p, (response, right) in enumerate(answers):
                outcome, _ = await storage.record_answer(AnswerRecord(
                    post.id, f"tg:{p}", -1, right, when + timedelta(seconds=p), 4000,
                    name=f"p{p}", response=response))
                assert outcome == "inserted"
    finally:
        await storage.close()


async def test_report_marks_every_right_option_and_lists_the_typed_answers(
    tmp_path: Path
) -> None:
    await seed_kinds(tmp_path)
    proc = quizbot(tmp_path, "report", "--quiz", "kinds")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()

    def under(question: str) -> list[str]:
        """A question's row and the lines under it, up to the next row."""
        start = next(i for i, line in enumerate(lines) if line.startswith(question + " "))
        end = next(i for i in range(start + 1, len(lines))
                   if not lines[i].startswith(" "))
        return [line.strip() for line in lines[start:end]]

    # select all: A, B and D are right, each starred; shares of those who picked each
    multi = under("k-multi")
    assert multi[0].split()[-8:-2] == ["7", "43%", "*100%", "*43%", "57%", "*43%"]
    assert multi[1] == ("A*) A larger micro-batch  B*) A longer sequence  "
                        "C) A lower learning rate  D*) More layers")
    # a number with its unit, the tolerance's 0.42 right too; the commonest first
    assert under("k-num")[1:] == [
        "answers: “0.4 GB” 3 (43%) * · “4 GB” 2 (29%) · “0.42 GB” 1 (14%) * · “40 GB” 1 (14%)"]
    assert under("k-text")[1:] == [
        "answers: “checkpointing” 5 (71%) · “recomputation” 2 (29%) *"]
    # an order: no option columns; its items numbered as its answers name them
    assert under("k-order")[1:] == [
        "1) Receive activations  2) Run forward  3) Run backward  4) Send gradients back",
        "answers: “2 → 1 → 3 → 4” 4 (57%) · “1 → 2 → 3 → 4” 2 (29%) * · “4 → 3 → 2 → 1” 1 (14%)"]
    assert not any("*" in cell for cell in under("k-num")[0].split()[3:])  # nothing starred
    assert "Select all: * on each right option; A, B, …: the share who picked it." in lines


def test_report_lists_a_wrong_answer_past_the_commonest() -> None:
    """More distinct answers than are listed: the commonest wrong one not among them follows;
    one already listed is not said twice."""
    from bot.content.loader import load_file
    from bot.core.ports import ItemResponse

    quiz, _ = load_file(KINDS)
    assert quiz is not None

    def lines_under_k_num(numbers: list[str]) -> list[str]:
        responses = [ItemResponse(f"tg:{p}", "tg:-1", "kinds", "k-num", -1, n != "4", 3000, n)
                     for p, n in enumerate(numbers)]
        lines = [line.strip() for line in report_text([analyse_quiz(quiz, responses)])
                 .splitlines()]
        row = next(i for i, line in enumerate(lines) if line.startswith("k-num"))
        return lines[row + 1:row + 3]

    # five right forms (0.36 … 0.41 GB, all within 0.4 ± 0.05) twice each fill the list
    right = [n for n in ("0.36", "0.37", "0.38", "0.39", "0.41") for _ in range(2)]
    listed, wrong = lines_under_k_num([*right, "4"])
    assert listed.startswith("answers: “0.36 GB” 2 (18%) * · ") and listed.count("*") == 5
    assert "“4 GB”" not in listed
    assert wrong == "most common wrong: “4 GB” 1 (9%)"
    listed, after = lines_under_k_num(["4", "4", *right[:4]])
    assert listed == "answers: “4 GB” 2 (33%) · “0.36 GB” 2 (33%) * · “0.37 GB” 2 (33%) *"
    assert not after.startswith("most common wrong")  # "4" is listed already

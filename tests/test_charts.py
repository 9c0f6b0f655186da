"""The PNG charts (bot/reports/png.py, fonts.py): golden tests of each chart's size and of
the strings it was asked to draw (recorded by `Drawing`, no OCR), Bengali and Hindi drawn with
fonts that have their script, English labels where no font has it, and text large enough
to read on a phone once Telegram has scaled the photo down."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from bot.core.chat_analysis import MAX_CHART_OPTIONS, chart_rows
from bot.core.models import ItemStats, PostSummary, QuizReport, ShownQuestion
from bot.reports import chart_drawing, chart_size, fonts, png, summary_chart_size, summary_drawing
from bot.reports.fonts import Face, parse_charset, runs

BENGALI = range(0x980, 0xA00)
DEVANAGARI = range(0x900, 0x980)
TELEGRAM_PHOTO_SIDE = 1280  # Telegram scales a photo down to this on its longer side
READABLE = 11  # pixels


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def question(locale: str = "en", prompt: str = "Which stage of ZeRO shards the gradients?",
             options: tuple[str, ...] = ("Stage 1", "Stage 2", "Stage 3")) -> ShownQuestion:
    return ShownQuestion(
        post_id=1, chat_key="tg:-1", quiz_id="zero", quiz_title="ZeRO", question_id="z-two",
        prompt=prompt, options=options, correct=1, explanation="Stage 2.", details=None,
        locale=locale, number=2, total=8,
    )


def summary(q: ShownQuestion, per_option: tuple[int, ...] = (1, 2, 1)) -> PostSummary:
    return PostSummary(1, q.chat_key, q, sum(per_option), per_option[q.correct], per_option, ())


def item(question_id: str, prompt: str, options: tuple[str, ...], counts: tuple[int, ...],
         answer: int = 0, order: tuple[int, ...] = ()) -> ItemStats:
    return ItemStats(question_id, prompt, answer, counts, None, 0, 3000.0, (), options, order)


# (prompt, options): conjuncts (স্ট, ন্ট, প্ট) and vowel signs (ি, ে, ों) to shape
BENGALI_TEXT = ("ZeRO-এর কোন স্টেজে গ্রেডিয়েন্টও শার্ড হয়?",
                ("স্টেজ ১", "স্টেজ ২: গ্রেডিয়েন্ট ও অপ্টিমাইজার স্টেট", "স্টেজ ৩"))
HINDI_TEXT = ("ZeRO के किस स्टेज में ग्रेडिएंट भी शार्ड होते हैं?",
              ("स्टेज 1", "स्टेज 2: ग्रेडिएंट और ऑप्टिमाइज़र स्टेट", "स्टेज 3"))


def needs_script(locale: str) -> None:
    if not fonts.can_write(locale):
        pytest.skip(f"no font for the {locale} script (apt-get install fonts-noto-core) or "
                    "no raqm in Pillow: the chart falls back to English")


# golden: the close summary ---------------------------------------------------------------------
def test_the_summary_chart_draws_title_tally_and_every_option_in_shown_order() -> None:
    needs_script("en")
    drawing = summary_drawing(summary(question()))
    assert (drawing.width, drawing.height) == summary_chart_size(3) == (720, 280)
    assert drawing.strings == [
        "Which stage of ZeRO shards the gradients?",
        "4 people answered · 50% right",
        "1 (25%)", "A) Stage 1",
        "2 (50%) ✓", "B) Stage 2",
        "1 (25%)", "C) Stage 3",
    ]
    assert png_size(drawing.png()) == (720, 280)


def test_a_long_prompt_takes_two_lines_and_a_long_option_is_cut_to_fit() -> None:
    needs_script("en")
    long = question(prompt="How much model state does each of 64 GPUs hold under ZeRO stage 3 "
                           "when training a 7.5B parameter model with mixed-precision Adam?",
                    options=("About 1.9 GB", "About 16.6 GB, because the optimizer state is "
                             "sharded but the weights and the gradients are kept whole", "Z"))
    drawing = summary_drawing(summary(long))
    first, second = drawing.strings[:2]
    assert "…" not in first and second.endswith("…")
    option = next(s for s in drawing.strings if s.startswith("B) "))
    assert option.endswith("…") and drawing.measure(option, png.BODY) < drawing.width


def test_nobody_answered_is_drawn_too() -> None:
    needs_script("en")
    drawing = summary_drawing(summary(question(), (0, 0, 0)))
    assert "0 people answered" in drawing.strings
    assert drawing.strings.count("0 (0%)") == 2 and "0 (0%) ✓" in drawing.strings


# golden: the item analysis ---------------------------------------------------------------------
def analysed(as_seen: bool = True) -> QuizReport:
    return QuizReport("zero", "ZeRO Sharding", 4, (
        # the chat saw Stage 3, Stage 1, Stage 2: the answer (canonical 1) was its C
        item("z-two", "Which stage shards the gradients?", ("Stage 1", "Stage 2", "Stage 3"),
             (1, 2, 1), answer=1, order=(2, 0, 1) if as_seen else ()),
        item("z-one", "What does stage 1 shard?", ("Optimizer state", "Weights"), (3, 1)),
    ), as_seen=as_seen)


def test_the_analysis_chart_letters_options_as_the_chat_saw_them() -> None:
    needs_script("en")
    drawing = chart_drawing([analysed()])
    assert (drawing.width, drawing.height) == chart_size([analysed()]) == (720, 446)
    assert drawing.strings == [
        "Item analysis",
        "Letters as this chat last saw each question.",
        "4 people · 8 answers", "ZeRO Sharding (zero)",
        "4 answers · 50% right", "Which stage shards the gradients?",
        "1 (25%)", "A) Stage 3",
        "1 (25%)", "B) Stage 1",
        "2 (50%) ✓", "C) Stage 2",
        "4 answers · 75% right", "What does stage 1 shard?",
        "3 (75%) ✓", "A) Optimizer state",
        "1 (25%)", "B) Weights",
    ]


def test_the_cli_chart_says_its_letters_are_the_packs() -> None:
    needs_script("en")
    drawing = chart_drawing([analysed(as_seen=False)], "Item analysis (all chats, quiz zero)")
    assert drawing.strings[:2] == [
        "Item analysis (all chats, quiz zero)",
        "Letters in the pack's order (each chat saw its own shuffle).",
    ]
    assert drawing.strings[6:8] == ["1 (25%)", "A) Stage 1"]


def test_no_answers_is_a_small_chart_that_says_so() -> None:
    needs_script("en")
    drawing = chart_drawing([])
    assert (drawing.width, drawing.height) == chart_size([]) == (720, 144)
    assert drawing.strings == ["Item analysis", "No answers yet."]


def test_many_questions_stay_readable_once_telegram_scales_the_photo() -> None:
    """The caps (bot/core/chat_analysis.py) against the worst case: a quiz of many questions
    with the most options a pack may have."""
    for options in (2, 4, 10):
        texts = tuple(f"Option {o}" for o in range(options))
        many = QuizReport("big", "Big", 10, tuple(
            item(f"q{n}", f"Question {n}", texts, (1,) * options) for n in range(40)))
        [charted] = chart_rows([many])
        assert sum(len(i.option_counts) for i in charted.items) <= max(MAX_CHART_OPTIONS,
                                                                        options)
        width, height = chart_size([charted])
        scale = min(1.0, TELEGRAM_PHOTO_SIDE / max(width, height))
        assert png.SMALL * scale >= READABLE, (options, width, height)


# Bengali and Hindi ---------------------------------------------------------------------------
@pytest.mark.parametrize(("locale", "script", "family", "texts", "tally"), [
    ("bn", BENGALI, "Noto Sans Bengali", BENGALI_TEXT, "4 জন উত্তর দিয়েছেন · 50% সঠিক"),
    ("hi", DEVANAGARI, "Noto Sans Devanagari", HINDI_TEXT, "4 लोगों ने जवाब दिया · 50% सही"),
])
def test_bengali_and_hindi_are_drawn_with_a_font_that_has_their_script(
    locale: str, script: range, family: str, texts: tuple[str, tuple[str, ...]], tally: str,
) -> None:
    needs_script(locale)
    q = question(locale, *texts)
    drawing = summary_drawing(summary(q))
    assert tally in drawing.strings  # the labels are in the reader's language
    assert f"B) {q.options[1]}" in drawing.strings
    faces = {f.path: f for f in fonts.faces()}
    scripted = [r for r in drawing.runs if any(ord(c) in script for c in r.text)]
    assert scripted, "nothing in the script was drawn"
    for run in scripted:
        assert run.family == family, run
        face = faces[run.path]
        assert all(face.covers(c) for c in run.text if not c.isspace()), run


def test_the_analysis_chart_in_bengali() -> None:
    needs_script("bn")
    report = replace(analysed(), title="নমুনা কুইজ",
                     items=(item("z-two", *BENGALI_TEXT, (1, 2, 1), answer=1),))
    drawing = chart_drawing([report], None, "bn")
    assert drawing.strings[:2] == ["আইটেম বিশ্লেষণ",
                                   "অক্ষরগুলো এই চ্যাটে প্রতিটি প্রশ্ন শেষবার যেভাবে দেখা গেছে সেভাবে।"]
    assert "নমুনা কুইজ (zero)" in drawing.strings
    assert all(r.family == "Noto Sans Bengali" for r in drawing.runs
               if any(ord(c) in BENGALI for c in r.text))


def test_without_a_font_for_the_script_the_labels_are_english_and_it_is_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    latin = [f for f in fonts.faces() if f.family == "Noto Sans"]
    if not latin:
        pytest.skip("no Noto Sans installed (apt-get install fonts-noto-core)")
    monkeypatch.setattr(fonts, "faces", lambda: tuple(latin))
    monkeypatch.setattr(png, "_logged", set())
    q = question("bn", *BENGALI_TEXT)
    with caplog.at_level(logging.WARNING, logger="bot.reports.png"):
        first = summary_drawing(summary(q))
        summary_drawing(summary(q))
    assert first.strings == ["z-two", "4 people answered · 50% right",
                             "1 (25%)", "A)", "2 (50%) *", "B)", "1 (25%)", "C)"]
    [record] = [r for r in caplog.records if "chart labels in English" in r.getMessage()]
    assert "bn" in record.getMessage()


# fonts ---------------------------------------------------------------------------------------
LATIN = Face("Latin", "latin.ttf", ((0x20, 0x7E),))
BANGLA = Face("Bangla", "bangla.ttf", ((0x20, 0x3F), (0x980, 0x9FF)))
SYMBOLS = Face("Symbols", "symbols.ttf", ((0x2713, 0x2713),))


def test_text_is_split_into_runs_each_font_can_draw() -> None:
    pieces = list(runs("ZeRO স্টেজ ৩ — 50% ✓", [LATIN, BANGLA, SYMBOLS]))
    assert [(text, face.family if face else None) for text, face in pieces] == [
        ("ZeRO ", "Latin"), ("স্টেজ ৩ ", "Bangla"), ("— ", None), ("50% ", "Latin"),
        ("✓", "Symbols"),
    ]


def test_a_vowel_sign_or_virama_stays_with_its_consonant() -> None:
    # a virama and a vowel sign no face claims still belong to the run before them
    only_consonants = Face("Consonants", "c.ttf", ((0x995, 0x9B9),))
    assert list(runs("ক্ষি", [only_consonants])) == [("ক্ষি", only_consonants)]


def test_fontconfig_charsets_are_read() -> None:
    assert parse_charset("20-7e a0-17f 2013") == ((0x20, 0x7E), (0xA0, 0x17F),
                                                  (0x2013, 0x2013))
    face = Face("f", "f.ttf", parse_charset("20-7e 980-9ff"))
    assert face.covers("a") and face.covers("ক") and not face.covers("क")


def test_a_cut_never_breaks_a_conjunct() -> None:
    needs_script("bn")
    drawing = png.Drawing(100, 100)
    word = "অপ্টিমাইজারস্টেটগ্রেডিয়েন্টশার্ডিং"
    for width in range(40, int(drawing.measure(word, png.BODY)), 7):
        cut = drawing.fit(word, png.BODY, width)
        assert cut.endswith("…")
        body = cut[:-1]
        assert not body or (body[-1] not in fonts.VIRAMAS
                            and not fonts.clings(word[len(body)]))

"""The console adapter driven as a subprocess through stdin and stdout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import SAMPLE_PACKS


def play(
    db: Path, stdin: str, *args: str, content: Path = SAMPLE_PACKS
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "QUIZBOT_DATABASE": str(db),
        "QUIZBOT_CONTENT_DIR": str(content),
        "TELEGRAM_BOT_TOKEN": "",
        "DISCORD_BOT_TOKEN": "",
    }
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], input=stdin, capture_output=True, text=True,
        env=env, timeout=60,
    )


def answer_letter(output: str, want_right: bool, question_marker: str, right_text: str) -> str:
    """Find the letter of `right_text` in the last printed question."""
    block = output[output.rindex(question_marker):]
    for line in block.splitlines():
        if len(line) > 3 and line[1] == ")" and line[3:] == right_text:
            return line[0] if want_right else ("A" if line[0] != "A" else "B")
    raise AssertionError(f"{right_text!r} not shown in {block!r}")


def test_full_quiz_with_bad_input(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    # Questions come in quiz order; the shuffle is unknown, so answer with letters and
    # bad input, then check the tally and the stored score agree.
    proc = play(db, "\n?\nZ\nA\nA\nA\n", "play", "--quiz", "sample", "--name", "ada")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("Please type one of: A, B, C") == 3  # empty line, ?, Z
    assert "question 1 of 3" in out and "question 3 of 3" in out
    assert "🏁 Sample Quiz:" in out
    right = out.count("✅ Correct!")
    assert f": {right} of 3 right" in out
    board = play(db, "", "leaderboard", "--name", "ada")
    assert f"1. ada — {right}/3 right" in board.stdout


def test_ctrl_d_saves_progress_and_play_resumes(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    first = play(db, "B\n", "play", "--quiz", "sample", "--name", "bo")
    assert first.returncode == 0, first.stderr
    assert "question 2 of 3" in first.stdout and "Progress saved" in first.stdout
    second = play(db, "A\nA\n", "play", "--name", "bo")  # no --quiz: resume
    assert second.returncode == 0, second.stderr
    assert "question 1 of 3" not in second.stdout
    assert "question 2 of 3" in second.stdout and "🏁" in second.stdout
    stats = play(db, "", "stats", "--name", "bo")
    assert "3 questions answered" in stats.stdout


def test_right_answer_shows_explanation_at_once(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    probe = play(db, "", "play", "--quiz", "sample", "--name", "cy")
    letter = answer_letter(probe.stdout, True, "question 1 of 3", "2")
    proc = play(db, f"{letter}\n", "play", "--name", "cy")
    assert "✅ Correct! " in proc.stdout and "One plus one is two." in proc.stdout


def test_bengali_console(tmp_path: Path) -> None:
    proc = play(tmp_path / "c.db", "", "play", "--quiz", "sample", "--lang", "bn", "--name", "d")
    assert "এক যোগ এক কত?" in proc.stdout and "নমুনা কুইজ" in proc.stdout


def test_unknown_quiz_lists_quizzes(tmp_path: Path) -> None:
    proc = play(tmp_path / "c.db", "", "play", "--quiz", "nope")
    assert proc.returncode == 2 and "sample" in proc.stdout


def test_run_without_token_falls_back_to_console_in_a_terminal(tmp_path: Path) -> None:
    import pty

    # stdin is a terminal (a pseudo-terminal the test types into); stdout is captured
    primary, secondary = pty.openpty()
    env = {**os.environ, "QUIZBOT_DATABASE": str(tmp_path / "c.db"),
           "QUIZBOT_CONTENT_DIR": str(SAMPLE_PACKS), "TELEGRAM_BOT_TOKEN": "",
           "DISCORD_BOT_TOKEN": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "run"], stdin=secondary, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env,
    )
    os.close(secondary)
    os.write(primary, b"1\nA\n\x04")  # choose the quiz, answer, then Ctrl-D
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(primary)
    assert proc.returncode == 0, err
    assert "TELEGRAM_BOT_TOKEN" in err
    assert "Choose a quiz" in out and "question 1 of 3" in out


def test_bad_setting_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    env_proc = subprocess.run(
        [sys.executable, "-m", "bot", "stats"], capture_output=True, text=True, timeout=60,
        env={**os.environ, "QUIZBOT_QUESTION_SECONDS": "soon",
             "TELEGRAM_BOT_TOKEN": "123:SECRET-TOKEN"},
    )
    assert env_proc.returncode == 2
    lines = env_proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "QUIZBOT_QUESTION_SECONDS" in lines[0]
    assert "SECRET-TOKEN" not in env_proc.stderr and "Traceback" not in env_proc.stderr


def test_broken_content_is_refused_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "packs"
    bad.mkdir()
    (bad / "x.yaml").write_text("id: x\ntitle: X\nquestions: []\n", encoding="utf-8")
    proc = play(tmp_path / "c.db", "", "play", content=bad)
    assert proc.returncode == 1
    assert f"{bad / 'x.yaml'}:3" in proc.stderr and "Traceback" not in proc.stderr


def test_ctrl_c_leaves_cleanly_with_progress_saved(tmp_path: Path) -> None:
    db, log = tmp_path / "c.db", tmp_path / "out.txt"
    env = {**os.environ, "QUIZBOT_DATABASE": str(db), "QUIZBOT_CONTENT_DIR": str(SAMPLE_PACKS)}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "play", "--quiz", "sample", "--name", "eve"],
            stdin=subprocess.PIPE, stdout=out, stderr=subprocess.PIPE, text=True, env=env,
            # a test run started in the background inherits SIGINT ignored; a terminal user's
            # Ctrl-C is what this test is about
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert proc.stdin is not None
        proc.stdin.write("A\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while "question 2 of 3" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)  # stdin stays open: end of input must not be what stops it
        assert proc.stderr is not None
        err = proc.stderr.read()
        proc.stdin.close()
        proc.stderr.close()
    assert proc.returncode == 130
    assert "Progress saved" in err and "Traceback" not in err
    stats = play(db, "", "stats", "--name", "eve")
    assert "1 question answered" in stats.stdout


def test_hindi_console_on_the_bundled_packs(tmp_path: Path) -> None:
    from bot.i18n import translator
    from tests.conftest import BUNDLED

    proc = play(tmp_path / "c.db", "", "play", "--quiz", "gradient-accumulation", "--lang", "hi",
                "--name", "hi", content=BUNDLED)
    assert proc.returncode == 0, proc.stderr
    words = " ".join(proc.stdout.split())  # the console wraps to the terminal's width
    assert "ग्रेडिएंट एक्युमुलेशन क्विज़" in words  # the pack's Hindi title
    assert "ग्रेडिएंट एक्युमुलेशन (gradient accumulation) मुख्य रूप से आपको क्या करने देता है?" \
        in words
    # started as `python -m bot` (quizbot may not be on PATH); its language and player kept
    saved = translator("hi").gettext("Progress saved. Run `{command}` again to continue.",
                                     command="python -m bot play --lang hi --name hi")
    # the console wraps to the terminal's width, so compare the words, not the line breaks
    assert "प्रोग्रेस सेव हो गई" in saved and " ".join(saved.split()) in " ".join(proc.stdout.split())


def test_another_quiz_asks_before_dropping_an_unfinished_one(tmp_path: Path) -> None:
    from bot.content import load_catalog
    from tests.conftest import BUNDLED

    # the packs' sizes, whatever questions they gain
    ga, ar = (len(load_catalog(BUNDLED).quizzes[q].questions)
              for q in ("gradient-accumulation", "activation-recomputation"))
    db = tmp_path / "c.db"
    first = play(db, "A\n", "play", "--quiz", "gradient-accumulation", "--name", "ivy",
                 content=BUNDLED)
    assert f"question 2 of {ga}" in first.stdout
    kept = play(db, "n\n", "play", "--quiz", "activation-recomputation", "--name", "ivy",
                content=BUNDLED)
    assert "You have an unfinished quiz: Gradient Accumulation Quiz" in kept.stdout
    assert f"Resuming Gradient Accumulation Quiz at question 2 of {ga}." in kept.stdout
    dropped = play(db, "y\n", "play", "--quiz", "activation-recomputation", "--name", "ivy",
                   content=BUNDLED)
    assert f"question 1 of {ar}" in dropped.stdout and "Resuming" not in dropped.stdout


def test_long_lines_break_between_words() -> None:
    from bot.adapters.console import wrap

    bengali = "গ্রেডিয়েন্ট অ্যাকুমুলেশন " * 8
    for line in wrap(bengali, width=30).splitlines():
        assert len(line) <= 30
        assert not line.startswith(("ি", "ু", "্")), line  # no vowel sign alone on a line
    assert wrap("short", width=30) == "short"


def test_empty_stats_in_the_terminal_suggest_a_terminal_command(tmp_path: Path) -> None:
    assert play(tmp_path / "c.db", "", "db", "migrate").returncode == 0
    proc = play(tmp_path / "c.db", "", "stats", "--name", "new")
    assert "Try python -m bot play" in proc.stdout and "/quiz" not in proc.stdout


def test_run_without_a_token_speaks_the_chosen_language_only(tmp_path: Path) -> None:
    """`make run ARGS='--lang bn'` in a terminal on a new database: the banner in Bengali, no
    log line between it and the quiz, and the resume hint keeps --lang."""
    import pty

    from bot.i18n import translator
    from tests.conftest import BUNDLED

    main, terminal = pty.openpty()  # `run` takes the console quiz only from a terminal
    try:
        env = {**os.environ, "QUIZBOT_DATABASE": str(tmp_path / "new.db"),
               "QUIZBOT_CONTENT_DIR": str(BUNDLED), "TELEGRAM_BOT_TOKEN": "",
               "DISCORD_BOT_TOKEN": "", "QUIZBOT_LOG_LEVEL": "INFO"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "run", "--lang", "bn", "--quiz", "mixed-precision"],
            stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        os.close(terminal)
        terminal = -1
        os.write(main, b"\x04")  # Ctrl-D at the first question: progress saved
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(main)
        if terminal != -1:
            os.close(terminal)
    assert proc.returncode == 0, err
    bn = translator("bn")
    banner = bn.gettext("No chat bot token is set ({variables}), so quizbot starts the "
                        "console quiz.", variables="TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN")
    assert " ".join(banner.split()) in " ".join(err.split()) and "কনসোল কুইজ" in banner
    assert " INFO " not in out + err and "No TELEGRAM_BOT_TOKEN" not in out + err
    assert "python -m bot play --lang bn" in out


KINDS = Path(__file__).parent / "data" / "kinds"


def test_every_kind_is_asked_and_typed(tmp_path: Path) -> None:
    """The kinds pack in quiz order: a choice, several picks, true/false, a number (typed
    wrong first, then in Bengali digits), a text by its Latin spelling, an order."""
    db = tmp_path / "c.db"
    typed = ["A", "A C", "B", "about half", "০.৪ GB", "Punargonona", "A B", "A B C D"]
    proc = play(db, "\n".join(typed) + "\n", "play", "--quiz", "kinds", "--name", "ada",
                content=KINDS)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Select every right option." in out
    assert "Answer with a number, in GB." in out
    assert out.count("Please type a number, e.g. 2.9.") == 1  # "about half", asked again
    assert "Your answer: 0.4 GB" in out
    assert "Your answer: punargonona" in out
    # "A B" is not an order of four: asked again; A B C D is never the right order (an
    # order is never shown in it)
    assert "Please type the letters of every option in order, e.g. B A D C." in out
    assert "Your answer: A → B → C → D" in out
    assert "🏁 Kinds of question:" in out and "question 6 of 6" in out

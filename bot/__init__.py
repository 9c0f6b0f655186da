"""quizbot: multiple-choice study quizzes for Discord, Telegram and the terminal."""

__version__ = "0.1.0"

"""Quiz packs: the YAML schema, platform limits and the loader that checks both."""

from bot.content.items import LOCALES, Option, Question, Quiz
from bot.content.loader import Catalog, load_catalog
from bot.content.problems import ContentError, Problem

__all__ = [
    "LOCALES",
    "Catalog",
    "ContentError",
    "Option",
    "Problem",
    "Question",
    "Quiz",
    "load_catalog",
]

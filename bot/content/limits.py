"""Platform limits that quiz text must respect (sources in ../shared/platform-limits.md).

Lengths are counted as Telegram counts them: UTF-16 code units. Discord counts characters,
which is never more, so one count serves both.
"""

from __future__ import annotations

# Telegram sendPoll (Bot API #sendpoll, #inputpolloption)
TG_QUESTION = 300
TG_OPTION = 100
TG_EXPLANATION = 200
TG_EXPLANATION_NEWLINES = 2
TG_POLL_MAX_OPTIONS = 12
TG_CALLBACK_DATA_BYTES = 64
TG_ALERT = 200  # answerCallbackQuery text
TG_MESSAGE = 4096
TG_CAPTION = 1024  # a photo's caption

# Discord (discord-api-docs: components/reference.mdx, resources/message.mdx)
DC_EMBED_TITLE = 256
DC_EMBED_DESCRIPTION = 4096
DC_EMBED_FIELD_VALUE = 1024
DC_EMBED_TOTAL = 6000
DC_MESSAGE = 2000
DC_BUTTONS = 25
DC_CUSTOM_ID = 100
DC_CHOICE_NAME = 100  # autocomplete choice name, used for quiz titles
DC_BUTTON_LABEL = 80
DC_SELECT_OPTIONS = 25
DC_SELECT_LABEL = 100  # a select option's label
DC_TEXT_INPUT = 4000  # a modal's text input
DC_ATTACHMENT_DESCRIPTION = 1024  # an attachment's alt text

# Reading packs: a real pack is about 50 kB; the caps keep a hostile or broken file cheap.
PACK_FILE_BYTES = 1024 * 1024  # per file
PACK_NESTING = 20  # a pack nests 6 levels deep (quiz > questions > question > options > option)
PACK_NODES = 50_000  # keys and values; a 1 MB pack of real questions has about 15,000
PACK_NUMBER_CHARS = 100  # longer numbers are refused before Python converts them

# What our own rendering needs on both platforms.
MIN_OPTIONS = 2
MAX_OPTIONS = 10
MIN_ORDER_ITEMS = 2
MAX_ORDER_ITEMS = 6  # put in order by buttons pressed in sequence, on both platforms
TITLE = DC_CHOICE_NAME
DETAILS = DC_EMBED_FIELD_VALUE - 24  # room for the field's own label in the summary embed
# an accepted typed answer: a short one (a term, a name), far below what a message or a
# Discord text input takes, so the reply that states it fits an alert too
TYPED_ANSWER = 100
# an image's text: Telegram's photo caption and Discord's attachment description
IMAGE_ALT = min(TG_CAPTION, DC_ATTACHMENT_DESCRIPTION)


def tg_len(text: str) -> int:
    """Length in UTF-16 code units, as the Bot API counts it."""
    return len(text.encode("utf-16-le")) // 2

# A question's card (bot/reports/card.py): code must fit it unscaled, images are capped so a
# pack's pictures stay cheap to read, decode and send.
CARD_CODE_LINES = 24
CARD_CODE_COLUMNS = 64
IMAGE_BYTES = 2 * 1024 * 1024
IMAGE_PIXELS = 4096 * 4096  # decoded size: a small file may still decode huge
SVG_BYTES = 256 * 1024

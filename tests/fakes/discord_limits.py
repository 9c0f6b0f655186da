"""What Discord refuses in a message or a modal, checked by the fake Discord API
(tests/fakes/discord_api.py) as the real API does: 400 with code 50035 "Invalid Form Body"
and an `errors` object nested along the path of the bad field, each leaf
`{"_errors": [{"code", "message"}]}` (discord-api-docs reference.mdx "Error Messages").
discord.py flattens that into "In components.0.components.1.custom_id: ...".

The limits (discord-api-docs components/reference.mdx, resources/message.mdx,
interactions/receiving-and-responding.mdx; ../../../shared/platform-limits.md B2, B3):
- legacy messages: content 2,000; embeds 10, title 256, description 4,096, fields 25 of name
  256 and value 1,024, footer 2,048, 6,000 over all embeds; at most 5 action rows, each of
  1-5 buttons or a single select;
- buttons: label 80, custom_id 1-100 and unique in the message, a link button has a url and
  no custom_id; selects: custom_id 1-100, 1-25 options (label and value 1-100, description
  100, values unique), min_values 0-25, max_values 1-25, min <= max <= the options,
  placeholder 150;
- attachments: description (alt text) 1,024;
- Components V2 (flag IS_COMPONENTS_V2): no content or embeds, at most 40 components in all
  (nested ones counted), 4,000 characters of text displays in all; sections of 1-3 text
  displays with a button or thumbnail accessory; media galleries of 1-10 items with a url
  and a description of up to 1,024; a message that has the flag keeps it;
- modals: custom_id 1-100, title 1-45, 1-5 components: a label (text 1-45, description 100)
  holding one text input or select, a text display, or (deprecated) an action row of one
  text input with its own label 1-45; text input custom_id 1-100, min_length 0-4,000,
  max_length 1-4,000, value 4,000, placeholder 100.
"""

from __future__ import annotations

from typing import Any

IS_COMPONENTS_V2 = 1 << 15
V2_COMPONENTS = 40
V2_TEXT = 4000
ACTION_ROW, BUTTON, STRING_SELECT, TEXT_INPUT = 1, 2, 3, 4
SELECTS = {3, 5, 6, 7, 8}  # string, user, role, mentionable, channel
SECTION, TEXT_DISPLAY, THUMBNAIL, MEDIA_GALLERY, FILE, SEPARATOR = 9, 10, 11, 12, 13, 14
CONTAINER, LABEL = 17, 18
V2_TOP = {ACTION_ROW, SECTION, TEXT_DISPLAY, MEDIA_GALLERY, FILE, SEPARATOR, CONTAINER}
IN_CONTAINER = V2_TOP - {CONTAINER}
LINK = 5
PREMIUM = 6


class FormError(Exception):
    """A field Discord refuses: where it is (`components.0.label`) and why."""

    def __init__(self, path: str, message: str, code: str = "BASE_TYPE_INVALID") -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
        self.code = code

    def errors(self) -> dict[str, Any]:
        """Discord's nested `errors` object for this field."""
        leaf: dict[str, Any] = {"_errors": [{"code": self.code, "message": self.message}]}
        for key in reversed([p for p in self.path.split(".") if p]):
            leaf = {key: leaf}
        return leaf


def _length(path: str, value: Any, low: int, high: int) -> None:
    text = value if isinstance(value, str) else ""
    if value is not None and not isinstance(value, str):
        raise FormError(path, "Must be a string.", "BASE_TYPE_STRING")
    if not low <= len(text) <= high:
        raise FormError(path, f"Must be between {low} and {high} in length.",
                        "BASE_TYPE_BAD_LENGTH")


def _at_most(path: str, value: Any, high: int) -> None:
    if value is not None:
        _length(path, value, 0, high)


def message(body: dict[str, Any], *, flags: int = 0) -> None:
    """A message body to create or edit; `flags`: those of the message being edited."""
    for i, attachment in enumerate(body.get("attachments") or []):
        _at_most(f"attachments.{i}.description", attachment.get("description"), 1024)
    if (int(body.get("flags") or 0) | flags) & IS_COMPONENTS_V2:
        _v2(body)
        return
    _at_most("content", body.get("content"), 2000)
    _embeds(body.get("embeds") or [])
    rows = body.get("components") or []
    if len(rows) > 5:
        raise FormError("components", "Must be 5 or fewer in length.", "BASE_TYPE_MAX_LENGTH")
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if row.get("type") != ACTION_ROW:
            raise FormError(f"components.{i}.type", "Only action rows may be top-level "
                            "components without the IS_COMPONENTS_V2 flag.",
                            "COMPONENT_LAYOUT_INVALID")
        _row(f"components.{i}", row, seen)


def _embeds(embeds: list[dict[str, Any]]) -> None:
    if len(embeds) > 10:
        raise FormError("embeds", "Must be 10 or fewer in length.", "BASE_TYPE_MAX_LENGTH")
    total = 0
    for i, embed in enumerate(embeds):
        for key, limit in (("title", 256), ("description", 4096)):
            _at_most(f"embeds.{i}.{key}", embed.get(key), limit)
            total += len(embed.get(key) or "")
        fields = embed.get("fields") or []
        if len(fields) > 25:
            raise FormError(f"embeds.{i}.fields", "Must be 25 or fewer in length.",
                            "BASE_TYPE_MAX_LENGTH")
        for j, f in enumerate(fields):
            _length(f"embeds.{i}.fields.{j}.name", f.get("name"), 1, 256)
            _length(f"embeds.{i}.fields.{j}.value", f.get("value"), 1, 1024)
            total += len(f["name"]) + len(f["value"])
        footer = (embed.get("footer") or {}).get("text")
        _at_most(f"embeds.{i}.footer.text", footer, 2048)
        total += len(footer or "")
    if total > 6000:
        raise FormError("embeds", "Embed size exceeds maximum size of 6000",
                        "MAX_EMBED_SIZE_EXCEEDED")


def _row(path: str, row: dict[str, Any], seen: set[str]) -> int:
    """An action row: 1-5 buttons or one select. Returns how many components it holds."""
    children = row.get("components") or []
    kinds = {c.get("type") for c in children}
    if not children or (kinds & SELECTS and len(children) != 1) or len(children) > 5:
        raise FormError(f"{path}.components", "An action row holds 1-5 buttons or one select.",
                        "COMPONENT_LAYOUT_WIDTH_EXCEEDED")
    for j, child in enumerate(children):
        where = f"{path}.components.{j}"
        if child.get("type") == BUTTON:
            _button(where, child, seen)
        elif child.get("type") in SELECTS:
            _select(where, child, seen)
        else:
            raise FormError(f"{where}.type", "Not a button or a select.",
                            "COMPONENT_TYPE_INVALID")
    return len(children)


def _custom_id(path: str, component: dict[str, Any], seen: set[str]) -> None:
    custom_id = component.get("custom_id")
    _length(f"{path}.custom_id", custom_id, 1, 100)
    if custom_id in seen:
        raise FormError(f"{path}.custom_id", "Component custom id cannot be duplicated",
                        "COMPONENT_CUSTOM_ID_DUPLICATED")
    seen.add(str(custom_id))


def _button(path: str, button: dict[str, Any], seen: set[str]) -> None:
    style = button.get("style")
    if style not in range(1, 7):
        raise FormError(f"{path}.style", "Value must be one of (1, 2, 3, 4, 5, 6).",
                        "BASE_TYPE_CHOICES")
    _at_most(f"{path}.label", button.get("label"), 80)
    if style == LINK:
        _length(f"{path}.url", button.get("url"), 1, 512)
        if "custom_id" in button:
            raise FormError(f"{path}.custom_id", "A link button cannot have a custom id.",
                            "BUTTON_CANNOT_HAVE_CUSTOM_ID")
    elif style != PREMIUM:
        _custom_id(path, button, seen)
    if style != PREMIUM and not button.get("label") and not button.get("emoji"):
        raise FormError(f"{path}.label", "A button needs a label or an emoji.",
                        "BUTTON_LABEL_OR_EMOJI_REQUIRED")


def _select(path: str, select: dict[str, Any], seen: set[str]) -> None:
    _custom_id(path, select, seen)
    _at_most(f"{path}.placeholder", select.get("placeholder"), 150)
    low, high = select.get("min_values", 1), select.get("max_values", 1)
    if not isinstance(low, int) or not 0 <= low <= 25:
        raise FormError(f"{path}.min_values", "int value should be <= 25 and >= 0.",
                        "NUMBER_TYPE_MAX")
    if not isinstance(high, int) or not 1 <= high <= 25:
        raise FormError(f"{path}.max_values", "int value should be <= 25 and >= 1.",
                        "NUMBER_TYPE_MAX")
    if low > high:
        raise FormError(f"{path}.min_values", "min_values must be <= max_values.",
                        "SELECT_COMPONENT_MIN_VALUES_INVALID")
    if select.get("type") != STRING_SELECT:
        return
    options = select.get("options") or []
    if not 1 <= len(options) <= 25:
        raise FormError(f"{path}.options", "Must be between 1 and 25 in length.",
                        "BASE_TYPE_BAD_LENGTH")
    if high > len(options):
        raise FormError(f"{path}.max_values", "max_values must be <= the number of options.",
                        "SELECT_COMPONENT_MAX_VALUES_INVALID")
    values: set[str] = set()
    for k, option in enumerate(options):
        _length(f"{path}.options.{k}.label", option.get("label"), 1, 100)
        _length(f"{path}.options.{k}.value", option.get("value"), 1, 100)
        _at_most(f"{path}.options.{k}.description", option.get("description"), 100)
        if option["value"] in values:
            raise FormError(f"{path}.options.{k}.value", "Option values must be unique.",
                            "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED")
        values.add(option["value"])


def _v2(body: dict[str, Any]) -> None:
    for key in ("content", "embeds", "poll", "stickers"):
        if body.get(key):
            raise FormError(key, "Cannot be used with the IS_COMPONENTS_V2 flag.",
                            "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2")
    components = body.get("components") or []
    seen: set[str] = set()
    totals = [0, 0]  # components, characters of text displays
    for i, component in enumerate(components):
        _v2_component(f"components.{i}", component, V2_TOP, seen, totals)
    if totals[0] > V2_COMPONENTS:
        raise FormError("components", f"Must be {V2_COMPONENTS} or fewer in total "
                        "(nested components counted).", "COMPONENTS_TOO_MANY")
    if totals[1] > V2_TEXT:
        raise FormError("components", f"The text displays must total {V2_TEXT} or fewer "
                        "characters.", "COMPONENTS_TEXT_TOO_LONG")


def _v2_component(path: str, c: dict[str, Any], allowed: set[int], seen: set[str],
                  totals: list[int]) -> None:
    kind = c.get("type")
    if kind not in allowed:
        raise FormError(f"{path}.type", f"Component type {kind} is not allowed here.",
                        "COMPONENT_TYPE_INVALID")
    totals[0] += 1
    if kind == ACTION_ROW:
        totals[0] += _row(path, c, seen)
    elif kind == TEXT_DISPLAY:
        _length(f"{path}.content", c.get("content"), 1, V2_TEXT)
        totals[1] += len(c["content"])
    elif kind == SECTION:
        texts = c.get("components") or []
        if not 1 <= len(texts) <= 3:
            raise FormError(f"{path}.components", "A section holds 1-3 text displays.",
                            "BASE_TYPE_BAD_LENGTH")
        for j, text in enumerate(texts):
            _v2_component(f"{path}.components.{j}", text, {TEXT_DISPLAY}, seen, totals)
        accessory = c.get("accessory")
        if not isinstance(accessory, dict):
            raise FormError(f"{path}.accessory", "A section needs an accessory.",
                            "BASE_TYPE_REQUIRED")
        totals[0] += 1
        if accessory.get("type") == BUTTON:
            _button(f"{path}.accessory", accessory, seen)
        elif accessory.get("type") == THUMBNAIL:
            _media(f"{path}.accessory", accessory)
        else:
            raise FormError(f"{path}.accessory.type", "A button or a thumbnail.",
                            "COMPONENT_TYPE_INVALID")
    elif kind == MEDIA_GALLERY:
        items = c.get("items") or []
        if not 1 <= len(items) <= 10:
            raise FormError(f"{path}.items", "Must be between 1 and 10 in length.",
                            "BASE_TYPE_BAD_LENGTH")
        for j, item in enumerate(items):
            _media(f"{path}.items.{j}", item)
    elif kind == FILE:
        url = str((c.get("file") or {}).get("url") or "")
        if not url.startswith("attachment://"):
            raise FormError(f"{path}.file.url", "A file component shows an attachment.",
                            "BASE_TYPE_INVALID")
    elif kind == SEPARATOR:
        if c.get("spacing", 1) not in (1, 2):
            raise FormError(f"{path}.spacing", "Value must be one of (1, 2).",
                            "BASE_TYPE_CHOICES")
    elif kind == CONTAINER:
        children = c.get("components") or []
        if not children:
            raise FormError(f"{path}.components", "A container holds at least one component.",
                            "BASE_TYPE_BAD_LENGTH")
        for j, child in enumerate(children):
            _v2_component(f"{path}.components.{j}", child, IN_CONTAINER, seen, totals)


def _media(path: str, item: dict[str, Any]) -> None:
    _length(f"{path}.media.url", (item.get("media") or {}).get("url"), 1, 2048)
    _at_most(f"{path}.description", item.get("description"), 1024)


def modal(data: dict[str, Any]) -> None:
    """A modal a callback opens."""
    _length("data.custom_id", data.get("custom_id"), 1, 100)
    _length("data.title", data.get("title"), 1, 45)
    components = data.get("components") or []
    if not 1 <= len(components) <= 5:
        raise FormError("data.components", "Must be between 1 and 5 in length.",
                        "BASE_TYPE_BAD_LENGTH")
    seen: set[str] = set()
    for i, c in enumerate(components):
        path = f"data.components.{i}"
        if c.get("type") == ACTION_ROW:  # deprecated: one text input with its own label
            children = c.get("components") or []
            if len(children) != 1 or children[0].get("type") != TEXT_INPUT:
                raise FormError(f"{path}.components", "A modal's action row holds one text "
                                "input.", "COMPONENT_LAYOUT_INVALID")
            _length(f"{path}.components.0.label", children[0].get("label"), 1, 45)
            _text_input(f"{path}.components.0", children[0], seen)
        elif c.get("type") == LABEL:
            _length(f"{path}.label", c.get("label"), 1, 45)
            _at_most(f"{path}.description", c.get("description"), 100)
            inner = c.get("component") or {}
            if inner.get("type") == TEXT_INPUT:
                if inner.get("label") is not None:
                    raise FormError(f"{path}.component.label", "A text input in a label has "
                                    "no label of its own.", "BASE_TYPE_INVALID")
                _text_input(f"{path}.component", inner, seen)
            elif inner.get("type") in SELECTS:
                _select(f"{path}.component", inner, seen)
            else:
                raise FormError(f"{path}.component.type", "A label holds a text input or a "
                                "select.", "COMPONENT_TYPE_INVALID")
        elif c.get("type") == TEXT_DISPLAY:
            _length(f"{path}.content", c.get("content"), 1, V2_TEXT)
        else:
            raise FormError(f"{path}.type", "Not allowed in a modal.", "COMPONENT_TYPE_INVALID")


def _text_input(path: str, text_input: dict[str, Any], seen: set[str]) -> None:
    _custom_id(path, text_input, seen)
    if text_input.get("style", 1) not in (1, 2):
        raise FormError(f"{path}.style", "Value must be one of (1, 2).", "BASE_TYPE_CHOICES")
    low, high = text_input.get("min_length", 0), text_input.get("max_length", 4000)
    if not isinstance(low, int) or not 0 <= low <= 4000:
        raise FormError(f"{path}.min_length", "int value should be <= 4000 and >= 0.",
                        "NUMBER_TYPE_MAX")
    if not isinstance(high, int) or not 1 <= high <= 4000 or low > high:
        raise FormError(f"{path}.max_length", "int value should be <= 4000 and >= 1.",
                        "NUMBER_TYPE_MAX")
    _at_most(f"{path}.value", text_input.get("value"), 4000)
    _at_most(f"{path}.placeholder", text_input.get("placeholder"), 100)

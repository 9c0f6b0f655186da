"""Checking the images a pack refers to: a file inside the pack's folder, a PNG, JPEG or SVG
that decodes, under the size caps, and an SVG that refers to nothing outside itself (a card
drawn from it must not fetch or read anything).

Both kinds are bounded before anything is drawn: a raster image by its pixels, read from its
header before it is decoded (a 69-byte PNG may claim 20000x20000); an SVG by what drawing it
costs, its <use> and marker references expanded (10^4 <use> of one long path is a small file
that takes hours to draw): elements, path points, nesting and its shape at a card's width.

The schema (schema.py) has already checked the path's shape; this checks the file, which
needs the folder. Pillow and defusedxml are imported when an image is checked.
"""

from __future__ import annotations

import io
import re
import warnings
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from bot.content import limits
from bot.content.files import Unreadable, read_regular

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from PIL import Image

# an SVG attribute or style that may name another resource: only same-document references
# (`#id`) are allowed
_HREF = re.compile(r"(^|})href$")
_CSS_URL = re.compile(r"url\(\s*['\"]?\s*(?!#)|@import", re.IGNORECASE)
_BANNED_SVG = {"script", "foreignObject"}
_CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?|\\(.)", re.DOTALL)
_CSS_COMMENT = re.compile(r"/\*.*?(\*/|$)", re.DOTALL)

# What drawing an SVG may cost, every <use> and marker expanded: cairosvg draws 10,000 path
# points in about a second, 5,000 small elements in a quarter of one; the bundled pictures
# have at most 60 elements and no paths.
SVG_ELEMENTS = 5_000
SVG_POINTS = 10_000
SVG_DEPTH = 64  # nesting of elements
SVG_TALLEST = 4.0  # height over width: a card draws an image at most 760x420 pixels
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_URL_ID = re.compile(r"url\(\s*['\"]?\s*#([^)'\"\s]+)")
_MARKER = re.compile(r"marker(?:-start|-mid|-end)?\s*:\s*url\(\s*['\"]?\s*#([^)'\"\s]+)")
_POINTS_OF = {"path": "d", "polyline": "points", "polygon": "points"}
# drawn only where something refers to them, not where they are written
_NOT_IN_PLACE = {"defs", "symbol", "marker", "pattern", "clipPath", "mask", "linearGradient",
                 "radialGradient", "filter"}
_LENGTH = re.compile(r"\s*([0-9.]+(?:[eE][-+]?\d+)?)\s*(px|pt|pc|mm|cm|in|em|ex)?\s*$")
_UNITS = {None: 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54,
          "in": 96.0, "em": 16.0, "ex": 8.0}


# Set by `quizbot run` (load_catalog's leave_out_bad_images): a bad image is left out of its
# question, a warning ending with LEFT_OUT, and its pack loads; validation and imports refuse
# it. Such a pack is not kept in the content cache, so a fixed image is read at the next start.
LEAVE_OUT: ContextVar[bool] = ContextVar("leave_out_bad_images", default=False)
LEFT_OUT = "; the question is shown without it"


class BadImage(Exception):
    """Why an image cannot be used, as a sentence for its author."""


class ImageTooLarge(BadImage):
    """An image that decodes to more pixels than a card takes."""


def resolve(folder: Path, relative: str) -> Path:
    """The image's file, which must stay inside `folder` (also through symbolic links)."""
    root = folder.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise BadImage(f"{relative!r} leads outside the pack's folder")
    return path


def read_image(folder: Path, relative: str) -> bytes:
    """The image's bytes once checked; BadImage says why not."""
    path = resolve(folder, relative)
    svg = path.suffix.lower() == ".svg"
    cap = limits.SVG_BYTES if svg else limits.IMAGE_BYTES
    try:
        data = read_regular(path, cap, what="an image", too_big=(
            f"the image is larger than {cap // 1024} KiB, the limit; make it smaller"))
    except Unreadable as exc:
        raise BadImage(str(exc)) from None
    if svg:
        check_svg(data)
    else:
        check_raster(data)
    return data


def check_raster(data: bytes) -> tuple[int, int]:
    """The (width, height) of a PNG or JPEG that decodes whole, within IMAGE_PIXELS."""
    from PIL import UnidentifiedImageError

    try:
        with open_raster(data) as image:
            size = image.size
            image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise BadImage(f"the image does not decode ({exc})") from None
    return size


def open_raster(data: bytes) -> Image.Image:
    """The PNG or JPEG, opened but not decoded yet, once its header's size is within
    IMAGE_PIXELS (ImageTooLarge otherwise, BadImage if it is another format)."""
    from PIL import Image

    with warnings.catch_warnings():
        # Pillow's own bomb check, far above ours, warns or raises at open: the size is
        # compared with IMAGE_PIXELS here, before anything is decoded
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data))
        except Image.DecompressionBombError:
            _check_pixels(*(header_size(data) or (0, 0)))
            raise ImageTooLarge("the image claims more pixels than a card takes") from None
    try:
        if image.format not in ("PNG", "JPEG"):
            raise BadImage(f"the file is {image.format or 'unknown'}, not a PNG or JPEG")
        _check_pixels(*image.size)
    except BadImage:
        image.close()
        raise
    return image


def _check_pixels(width: int, height: int) -> None:
    if width * height > limits.IMAGE_PIXELS:
        raise ImageTooLarge(f"the image is {width}x{height} pixels, more than "
                            f"{limits.IMAGE_PIXELS:,} in all; scale it down")


def header_size(data: bytes) -> tuple[int, int] | None:
    """The (width, height) a PNG's header claims, read without Pillow (None: not a PNG)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return None


def _css(text: str) -> str:
    """CSS with its comments and escapes undone (`u\\72l(` is `url(`), as a parser reads it."""
    def unescape(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            code = int(match.group(1), 16)
            return chr(code) if 0 < code <= 0x10FFFF else "\ufffd"
        return match.group(2)

    return _CSS_ESCAPE.sub(unescape, _CSS_COMMENT.sub("", text))


def parse_svg(data: bytes) -> Element:
    """The SVG's root element; BadImage if it is not well-formed, has a DTD or entities, or
    is not an SVG."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        root: Element = fromstring(data, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise BadImage(f"the SVG declares a DTD or entities ({type(exc).__name__})") from None
    except Exception as exc:  # ElementTree's ParseError and encoding errors
        raise BadImage(f"the SVG is not well-formed XML ({exc})") from None
    if not isinstance(root.tag, str) or not root.tag.endswith("svg"):
        raise BadImage("the file is not an SVG (its root element is not <svg>)")
    return root


def check_svg(data: bytes) -> Element:
    """An SVG with no DTD, entity, script or reference to anything outside itself, within
    the drawing budget (svg_cost): its root element."""
    root = parse_svg(data)
    for element in root.iter():
        name = element.tag.rsplit("}", 1)[-1]
        if name in _BANNED_SVG:
            raise BadImage(f"the SVG has a <{name}> element; cards draw static pictures only")
        for key, value in element.attrib.items():
            if _HREF.search(key) and not value.strip().startswith("#"):
                raise BadImage(f"the SVG refers to {value[:60]!r}; an image may refer only "
                               "to its own elements (#id)")
            if _CSS_URL.search(_css(value)):
                raise BadImage("the SVG's style refers to another file")
        if name == "style" and element.text and _CSS_URL.search(_css(element.text)):
            raise BadImage("the SVG's style refers to another file")
    _check_cost(root)
    return root


def _name(element: Element) -> str:
    return element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""


def _points(element: Element) -> int:
    attribute = _POINTS_OF.get(_name(element))
    if attribute is None:
        return 0
    return len(_NUMBER.findall(element.get(attribute, ""))) // 2


def _refs(element: Element, ids: dict[str, Element], styled_markers: list[str],
          in_markers: set[int]) -> list[tuple[Element, int]]:
    """What drawing `element` draws again elsewhere: (element, times). Markers set by a
    <style> apply to every path outside the markers themselves."""
    out: list[tuple[Element, int]] = []
    vertices = _points(element) + 1
    markers: list[str] = (list(styled_markers) if _name(element) in _POINTS_OF
                          and id(element) not in in_markers else [])
    for key, value in element.attrib.items():
        local = key.rsplit("}", 1)[-1]
        if _HREF.search(key) and value.strip().startswith("#"):
            if (target := ids.get(value.strip()[1:])) is not None:
                out.append((target, 1))
        elif local.startswith("marker"):
            markers += _URL_ID.findall(value)
        elif local == "style":
            css = _css(value)
            markers += _MARKER.findall(css)
            out += [(ids[i], 1) for i in _URL_ID.findall(_MARKER.sub("", css)) if i in ids]
        else:
            out += [(ids[i], 1) for i in _URL_ID.findall(value) if i in ids]
    out += [(ids[i], vertices) for i in markers if i in ids]
    return out


def svg_cost(root: Element) -> tuple[int, int]:
    """(elements, path points) that drawing `root` takes, each <use>, marker and other
    reference counted as often as it is drawn; BadImage if references go in a circle or
    elements nest deeper than SVG_DEPTH."""
    depth = [(root, 1)]
    while depth:
        element, level = depth.pop()
        if level > SVG_DEPTH:
            raise BadImage(f"the SVG nests elements more than {SVG_DEPTH} deep")
        depth += [(child, level + 1) for child in element]
    ids = {element.get("id", ""): element for element in root.iter()}
    ids.pop("", None)
    styled = [_css(e.text) for e in root.iter() if _name(e) == "style" and e.text]
    styled_markers = [m for css in styled for m in _MARKER.findall(css)]
    in_markers = {id(e) for marker in root.iter() if _name(marker) == "marker"
                  for e in marker.iter()}
    cap = (SVG_ELEMENTS + SVG_POINTS) * 10  # counts past this are only "too many"
    cost: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()
    stack: list[tuple[Element, bool]] = [(root, False)]
    while stack:
        element, expanded = stack.pop()
        key = id(element)
        if key in cost:
            continue
        deps = [(child, 0 if _name(child) in _NOT_IN_PLACE else 1) for child in element]
        deps += _refs(element, ids, styled_markers, in_markers)
        if not expanded:
            if key in open_:
                raise BadImage("the SVG's references go in a circle (an element uses itself)")
            open_.add(key)
            stack.append((element, True))
            stack += [(dep, False) for dep, _ in deps if id(dep) not in cost]
            continue
        elements, points = 1, _points(element)
        for dep, times in deps:
            if id(dep) not in cost:  # an ancestor: a circle
                raise BadImage("the SVG's references go in a circle (an element uses itself)")
            e, p = cost[id(dep)]
            elements, points = min(cap, elements + e * times), min(cap, points + p * times)
        cost[key] = (elements, points)
        open_.discard(key)
    return cost[id(root)]


def svg_size(root: Element) -> tuple[float, float] | None:
    """The (width, height) an SVG declares, from width and height or its viewBox; None when
    it declares neither (or in units relative to a page, like %)."""
    def length(name: str) -> float | None:
        match = _LENGTH.match(root.get(name, ""))
        return float(match.group(1)) * _UNITS[match.group(2)] if match else None

    width, height = length("width"), length("height")
    box = _NUMBER.findall(root.get("viewBox", ""))
    if (width is None or height is None) and len(box) == 4:
        box_width, box_height = float(box[2]), float(box[3])
        if width is None and height is None:
            width, height = box_width, box_height
        elif width is None and box_height > 0 and height is not None:
            width = height * box_width / box_height
        elif height is None and box_width > 0 and width is not None:
            height = width * box_height / box_width
    if width is None or height is None:
        return None
    return width, height


def _check_cost(root: Element) -> None:
    elements, points = svg_cost(root)
    if elements > SVG_ELEMENTS:
        raise BadImage(f"the SVG draws {_more(elements)} elements (its <use> and markers "
                       f"expanded), more than {SVG_ELEMENTS:,}; simplify it or use a PNG")
    if points > SVG_POINTS:
        raise BadImage(f"the SVG draws {_more(points)} path points (its <use> and markers "
                       f"expanded), more than {SVG_POINTS:,}; simplify it or use a PNG")
    size = svg_size(root)
    if size is not None:
        width, height = size
        if width <= 0 or height <= 0:
            raise BadImage(f"the SVG's size is {width:g}x{height:g}; it draws nothing")
        if height / width > SVG_TALLEST:
            raise BadImage(f"the SVG is {width:g}x{height:g}, more than {SVG_TALLEST:g} times "
                           "as tall as wide; a card shows it too small to read")


def _more(count: int) -> str:
    cap = (SVG_ELEMENTS + SVG_POINTS) * 10
    return f"over {cap:,}" if count >= cap else f"{count:,}"

"""Checking the images a pack refers to: a file inside the pack's folder, a PNG, JPEG or SVG
that decodes, under the size caps, and an SVG that refers to nothing outside itself (a card
drawn from it must not fetch or read anything).

The schema (schema.py) has already checked the path's shape; this checks the file, which
needs the folder. Pillow and defusedxml are imported when an image is checked.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from bot.content import limits
from bot.content.files import Unreadable, read_regular

# an SVG attribute or style that may name another resource: only same-document references
# (`#id`) are allowed
_HREF = re.compile(r"(^|})href$")
_CSS_URL = re.compile(r"url\(\s*['\"]?\s*(?!#)|@import", re.IGNORECASE)
_BANNED_SVG = {"script", "foreignObject"}


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
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format not in ("PNG", "JPEG"):
                raise BadImage(f"the file is {image.format or 'unknown'}, not a PNG or JPEG")
            size = image.size
            if size[0] * size[1] > limits.IMAGE_PIXELS:
                raise ImageTooLarge(f"the image is {size[0]}x{size[1]} pixels, more than "
                                    f"{limits.IMAGE_PIXELS:,} in all; scale it down")
            image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise BadImage(f"the image does not decode ({exc})") from None
    return size


def check_svg(data: bytes) -> None:
    """An SVG with no DTD, entity, script or reference to anything outside itself."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        root = fromstring(data, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise BadImage(f"the SVG declares a DTD or entities ({type(exc).__name__})") from None
    except Exception as exc:  # ElementTree's ParseError and encoding errors
        raise BadImage(f"the SVG is not well-formed XML ({exc})") from None
    if not root.tag.endswith("svg"):
        raise BadImage("the file is not an SVG (its root element is not <svg>)")
    for element in root.iter():
        name = element.tag.rsplit("}", 1)[-1]
        if name in _BANNED_SVG:
            raise BadImage(f"the SVG has a <{name}> element; cards draw static pictures only")
        for key, value in element.attrib.items():
            if _HREF.search(key) and not value.strip().startswith("#"):
                raise BadImage(f"the SVG refers to {value[:60]!r}; an image may refer only "
                               "to its own elements (#id)")
            if _CSS_URL.search(value):
                raise BadImage("the SVG's style refers to another file")
        if name == "style" and element.text and _CSS_URL.search(element.text):
            raise BadImage("the SVG's style refers to another file")

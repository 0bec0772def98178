"""Images in requests: the placeholder token, image URL and data URL checks, base64 payloads.

On the V4.1 template an image is an image token in the text, with its source kept beside it; V4 has no image
token and writes a placeholder text instead (behavior.md#chat-content-parts). The image sources a protocol accepts are checked
here: ``http(s)`` URLs are taken as they are, ``data:`` URLs must be base64 images of a supported type
(following WHATWG fetch's "data: URL processor" and "forgiving-base64 decode"), and raw base64 payloads are
brought to canonical form.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dscodec.conversation import ImageSource
from dscodec.errors import ConversionError

__all__ = [
    "IMAGE_TOKEN",
    "UNSUPPORTED_IMAGE_TEXT",
    "ImageRef",
    "canonical_base64",
    "checked_image_sources",
    "file_data_problem",
    "image_source_for_url",
    "reference_or_refuse",
]

#: Spelling of the image placeholder token (behavior.md#special-tokens, ``SpecialToken.Image``).
IMAGE_TOKEN = "<｜image｜>"
#: Text standing for an image on the V4 template, which has no image token (behavior.md#chat-content-parts).
UNSUPPORTED_IMAGE_TEXT = "[Unsupported Image]"

ImageDetail = Literal["low", "high", "original", "auto"]
#: An image a content part refers to: its URL and the detail asked for.
ImageRef = tuple[str, ImageDetail]

_IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp"})
_HTTP_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BASE64_ALPHABET = re.compile(r"[A-Za-z0-9+/]*")
_ASCII_WHITESPACE = "\t\n\x0c\r "
_NO_WHITESPACE = dict.fromkeys(map(ord, _ASCII_WHITESPACE))
_UNSUPPORTED_IMAGE = (
    "You have uploaded an unsupported image. Please make sure your image is valid and has one of the "
    "following formats: webp, png, jpeg, and gif."
)
_UNSUPPORTED_FILE = (
    "You have uploaded an unsupported file. Please make sure your file is valid and has one of the "
    "following formats: webp, png, jpeg, and gif."
)


@dataclass(frozen=True)
class _DataUrl:
    essence: str
    base64: bool
    body: str


def _percent_decode(text: str) -> bytes:
    """The bytes of ``text`` with each ``%`` and two hex digits decoded (a ``%`` without them stays as it is); a
    regex pass, so a long body costs no Python step per byte."""
    raw = text.encode("utf-8", "surrogatepass")
    if b"%" not in raw:
        return raw
    return _PERCENT_ESCAPE.sub(_unescaped, raw)


_PERCENT_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")


def _unescaped(match: re.Match[bytes]) -> bytes:
    return bytes((int(match.group(1), 16),))


def _mime_essence(text: str) -> str | None:
    # WHATWG MIME sniffing "parse a MIME type", reduced to what decides the essence.
    text = text.strip(_ASCII_WHITESPACE)
    slash = text.find("/")
    if slash < 0:
        return None
    type_ = text[:slash]
    rest = text[slash + 1 :]
    subtype = rest.split(";", 1)[0].rstrip(_ASCII_WHITESPACE)
    if not type_ or not subtype or not _HTTP_TOKEN.fullmatch(type_) or not _HTTP_TOKEN.fullmatch(subtype):
        return None
    return f"{type_}/{subtype}".lower()


def _parse_data_url(url: str) -> _DataUrl | None:
    """The WHATWG fetch "data: URL processor" (None when ``url`` is not a data URL or has no comma)."""
    # URL parsing first drops leading/trailing C0 controls and spaces, and every tab or newline.
    text = url.strip("".join(chr(c) for c in range(0x21)))
    text = text.replace("\t", "").replace("\n", "").replace("\r", "")
    if text[:5].lower() != "data:":
        return None
    rest = text[5:]
    rest = rest.split("#", 1)[0]
    comma = rest.find(",")
    if comma < 0:
        return None
    header = rest[:comma].strip(_ASCII_WHITESPACE)
    body = rest[comma + 1 :]
    base64 = False
    lowered = header.lower()
    if lowered.endswith("base64"):
        before = header[: -len("base64")].rstrip(" ")
        if before.endswith(";"):
            base64 = True
            header = before[:-1]
    if header.startswith(";"):
        header = "text/plain" + header
    essence = _mime_essence(header) or "text/plain"
    return _DataUrl(essence=essence, base64=base64, body=body)


def _forgiving_base64_ok(data: bytes) -> bool:
    """Whether WHATWG "forgiving-base64 decode" accepts ``data``."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return False
    text = text.translate(_NO_WHITESPACE)
    if len(text) % 4 == 0:
        if text.endswith("=="):
            text = text[:-2]
        elif text.endswith("="):
            text = text[:-1]
    if len(text) % 4 == 1:
        return False
    return _BASE64_ALPHABET.fullmatch(text) is not None


@dataclass(frozen=True)
class ImageCheck:
    """The outcome of checking one image reference: the source, or the message of the 400 to raise."""

    source: ImageSource | None
    error: str | None = None


def image_source_for_url(url: str, *, detail: ImageDetail, path: str) -> ImageCheck:
    """Check an ``image_url`` for the V4.1 template (behavior.md#chat-content-parts) and describe where the image comes from.

    ``http``/``https`` URLs are taken as they are (the server fetches them); ``data:`` URLs must be base64 and
    carry one of the supported image media types. Error messages are prefixed with ``path`` by the caller.
    """
    if url[:4].lower() == "http":
        return ImageCheck(ImageSource(kind="url", url=url, detail=detail, path=path))
    parsed = _parse_data_url(url)
    # Only base64 data URLs are taken, spelled exactly ``base64,`` (the reference's check).
    if parsed is None or "base64," not in url:
        return ImageCheck(None, "Unsupported image_url format")
    if parsed.essence not in _IMAGE_MEDIA_TYPES:
        return ImageCheck(None, _UNSUPPORTED_IMAGE)
    if parsed.base64 and not _forgiving_base64_ok(_percent_decode(parsed.body)):
        return ImageCheck(None, "Invalid base64 data")
    return ImageCheck(ImageSource(kind="data_url", url=url, detail=detail, path=path))


def file_data_problem(file_data: str) -> str | None:
    """Why a ``file`` part's ``file_data`` is not a base64 image data URL, or ``None`` when it is one.

    A valid one is then checked again as an image URL (so ``data:image/png,…`` without base64 is refused there).
    """
    parsed = _parse_data_url(file_data)
    if parsed is None:
        return "file_data is not a valid base64 data url"
    if parsed.essence not in _IMAGE_MEDIA_TYPES:
        return _UNSUPPORTED_FILE
    if parsed.base64 and not _forgiving_base64_ok(_percent_decode(parsed.body)):
        return "file_data is not a valid base64 data url"
    return None


def reference_or_refuse(
    where: str, kind: str, reference: str | None, file_id: str | None, fields: tuple[str, str]
) -> str:
    """The reference of a part that gives its image either by ``reference`` or by ``file_id``; ``fields`` are
    the two fields as the message for neither and the message for both name them.

    Raises:
        ConversionError: neither is given, both are, or only the file id (dscodec has no files to look up).
    """
    if reference is None and file_id is None:
        raise ConversionError(f"{where}: {kind} must have {fields[0]}")
    if reference is not None and file_id is not None:
        raise ConversionError(f"{where}: {kind} cannot have both {fields[1]}")
    if reference is None:
        raise ConversionError(
            f"{where}: file_id is not supported. Pass the image as a base64 data url instead."
        )
    return reference


def checked_image_source(url: str, *, detail: ImageDetail, path: str) -> ImageSource:
    """The source of an image given by URL (:func:`image_source_for_url`).

    Raises:
        ConversionError: the URL is refused; the message is prefixed with ``path``.
    """
    check = image_source_for_url(url, detail=detail, path=path)
    if check.source is None:
        raise ConversionError(f"{path}: {check.error}")
    return check.source


#: The longest link (an ``http…`` image URL) the V4.1 template takes, in UTF-8 bytes (observed).
MAX_LINK_BYTES = 8192


def link_length_problem(url: str) -> str | None:
    """Why an image link is refused for its length (more than :data:`MAX_LINK_BYTES` UTF-8 bytes), or None: a URL
    that is no link (a data URL) never is."""
    if len(url) * 4 <= MAX_LINK_BYTES or url[:4].lower() != "http":
        return None
    size = len(url.encode("utf-8", "surrogatepass"))
    if size <= MAX_LINK_BYTES:
        return None
    return (
        f"external link length {size} too long, max link length {MAX_LINK_BYTES}. Consider passing file data "
        "directly with base64 data url instead."
    )


def checked_image_sources(refs: Sequence[ImageRef | None], *, path: str) -> list[ImageSource | None]:
    """The source of every referenced image, in order (``None`` where a part refers to no image).

    Raises:
        ConversionError: the first refused URL; the message is prefixed with ``path``.
    """
    return [None if ref is None else checked_image_source(ref[0], detail=ref[1], path=path) for ref in refs]


def canonical_base64(data: str) -> str | None:
    """``data`` in canonical padded base64, or ``None`` when the reference refuses it (observed rules).

    Any number of trailing ``=`` is accepted; a last group of 2 or 3 characters needs at least one of them, and
    its unused bits must be zero. No whitespace and no URL-safe alphabet.
    """
    stripped = data.rstrip("=")
    if _BASE64_ALPHABET.fullmatch(stripped) is None:
        return None
    tail = len(stripped) % 4
    if tail == 1 or (tail and stripped == data):
        return None
    # ``stripped`` is pure alphabet and its padding is exact, so the plain decoder (the same on every Python
    # version; ``strict_mode`` needs 3.11) has nothing left to be lenient about.
    try:
        decoded = binascii.a2b_base64(stripped + "=" * (-len(stripped) % 4))
    except binascii.Error:
        return None
    canonical = binascii.b2a_base64(decoded, newline=False).decode("ascii")
    # Non-zero unused bits in the last group decode to the same bytes: compare to refuse them.
    return canonical if canonical.rstrip("=") == stripped else None

"""The fake's own token count: what the API bills for a request, counted from the request alone.

The product estimates a request's size to reserve its worst case before sending it; this count
is what the fake then bills, and `count_tokens` answers. It is the API's side of that contract,
so it shares nothing with the product's estimator: a check of the caps that counted with the
estimator would check the product against itself.

Claude's tokenizer is not published; this is a simple, deterministic approximation of one
(byte-pair merges over words, numbers, punctuation and whitespace), in the API's scale:

- **text** is split into pieces. A word of letters is one token for every six letters or part
  of them, and a new piece starts at every lower-to-upper case change (`requestTokens` is two
  words, random mixed-case letters are many); a run of more than 12 lowercase letters is rarely
  a word: one token for every three of them. Digits make a token for every three or part of
  them; punctuation one for every two characters of a run; a single space or newline joins the
  next piece for free, longer whitespace makes one token for every four characters. A character
  outside ASCII makes one token for every two of its UTF-8 bytes or part of them (an accented
  letter one, a CJK character or an emoji two).
- **framing:** every message costs 3 tokens beyond its content (its role and its turn), every
  content block 1; a `tool_use` block adds its name and its input's JSON, a `tool_result` its
  content; thinking is counted as its text.
- **tools:** a tool's name, description and input schema as JSON; a request with tools also
  carries the API's tool-use system prompt and each Anthropic-defined tool's own block, at the
  sizes Anthropic's pricing page publishes (`TOOL_USE_SYSTEM_PROMPT`, `ANTHROPIC_DEFINED_TOOLS`).
- **images:** width x height / 750 after the API's resize (long edge at most 1568 pixels, at
  most about 1.15 megapixels), read from a base64 PNG, GIF, JPEG or WebP header; an image whose
  size cannot be read (a URL, another format) counts as the largest, `MAX_IMAGE_TOKENS`.
- **documents:** a text source counts as its text; a base64 PDF `PDF_PAGE_TOKENS` a page (pages
  found by their `/Type /Page` objects, at least one); any other source one page.

Deterministic: the same request always counts the same.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from functools import lru_cache
from typing import Any

MESSAGE_FRAMING_TOKENS = 3
BLOCK_FRAMING_TOKENS = 1
# The API's tool-use system prompt (tool_choice auto or none; any or tool), and the blocks of
# Anthropic-defined tools, from Anthropic's tool-use pricing for the Claude 4 models.
TOOL_USE_SYSTEM_PROMPT = {"auto": 346, "forced": 313}
ANTHROPIC_DEFINED_TOOLS = {"bash_": 245, "text_editor_": 700}
MAX_IMAGE_TOKENS = 1600
PDF_PAGE_TOKENS = 1500
_IMAGE_LONG_EDGE = 1568
_IMAGE_MAX_PIXELS = 1_150_000

_PIECES = re.compile(
    r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[\t\n\r\f\v ]+|[!-/:-@\[-`{-~]+|[^\x00-\x7f]|[\x00-\x1f\x7f]"
)


def text_tokens(text: str) -> int:
    """Tokens of `text` alone (0 for empty text)."""
    if len(text) <= 2000:
        return _cached_text_tokens(text)
    return _count(text)


@lru_cache(maxsize=8192)  # every call resends the same system prompt, tools and history
def _cached_text_tokens(text: str) -> int:
    return _count(text)


def _count(text: str) -> int:
    total = 0
    for piece in _PIECES.findall(text):
        total += _piece_tokens(piece)
    return total


def _piece_tokens(piece: str) -> int:
    first = piece[0]
    if first.isascii() and first.isalpha():
        size = len(piece)
        return math.ceil(size / 3) if size > 12 and piece.islower() else math.ceil(size / 6)
    if first.isdigit():
        return math.ceil(len(piece) / 3)
    if first in " \n":
        return 0 if len(piece) == 1 else math.ceil(len(piece) / 4)
    if first.isspace():
        return math.ceil(len(piece) / 4)
    if not first.isascii():
        return math.ceil(len(piece.encode("utf-8")) / 2)
    return math.ceil(len(piece) / 2)


def json_tokens(value: Any) -> int:
    """Tokens of `value` written as JSON (a tool's schema, a tool call's input)."""
    return text_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True))


def block_tokens(block: Any) -> int:
    """Tokens of one content block (a string counts as a text block), with its framing."""
    if isinstance(block, str):
        return BLOCK_FRAMING_TOKENS + text_tokens(block)
    if not isinstance(block, dict):
        return BLOCK_FRAMING_TOKENS + json_tokens(block)
    kind = block.get("type")
    if kind == "text":
        content = text_tokens(str(block.get("text", "")))
    elif kind in ("tool_use", "server_tool_use"):
        content = text_tokens(str(block.get("name", ""))) + json_tokens(block.get("input", {}))
    elif kind == "tool_result":
        content = _content_tokens(block.get("content"))
    elif kind == "thinking":
        content = text_tokens(str(block.get("thinking", "")))
    elif kind == "redacted_thinking":
        content = text_tokens(str(block.get("data", "")))
    elif kind == "image":
        content = image_tokens(block.get("source"))
    elif kind == "document":
        content = document_tokens(block.get("source"))
    else:
        content = json_tokens({k: v for k, v in block.items() if k != "cache_control"})
    return BLOCK_FRAMING_TOKENS + content


def _content_tokens(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return text_tokens(content)
    return sum(block_tokens(block) for block in content)


def tool_tokens(tool: dict[str, Any]) -> int:
    """Tokens of one tool definition: an Anthropic-defined tool's published block, or a custom
    tool's name, description and input schema."""
    kind = str(tool.get("type") or "")
    for prefix, tokens in ANTHROPIC_DEFINED_TOOLS.items():
        if kind.startswith(prefix):
            return tokens
    return (
        text_tokens(str(tool.get("name", "")))
        + text_tokens(str(tool.get("description", "")))
        + json_tokens(tool.get("input_schema", {}))
    )


def tool_use_system_prompt_tokens(request: dict[str, Any]) -> int:
    """The API's own tool-use system prompt, which every request with tools carries."""
    if not request.get("tools"):
        return 0
    choice = request.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    return TOOL_USE_SYSTEM_PROMPT["forced" if forced else "auto"]


def image_tokens(source: Any) -> int:
    """width x height / 750 after the API's resize; `MAX_IMAGE_TOKENS` when the size is unknown."""
    size = _image_size(source)
    if size is None:
        return MAX_IMAGE_TOKENS
    width, height = size
    scale = min(1.0, _IMAGE_LONG_EDGE / max(width, height, 1), math.sqrt(_IMAGE_MAX_PIXELS / max(width * height, 1)))
    return max(1, math.ceil(int(width * scale) * int(height * scale) / 750))


def _image_size(source: Any) -> tuple[int, int] | None:
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    try:
        head = base64.b64decode(str(source.get("data", ""))[:4096] + "==", validate=False)
    except (binascii.Error, ValueError):
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP" and head[12:16] == b"VP8X" and len(head) >= 30:
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """The size in a JPEG's first start-of-frame marker, if it is within `data`."""
    at = 2
    while at + 9 <= len(data) and data[at] == 0xFF:
        marker, length = data[at + 1], int.from_bytes(data[at + 2:at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + length
    return None


def document_tokens(source: Any) -> int:
    """A text document as its text; a base64 PDF by its pages; anything else one page."""
    if not isinstance(source, dict):
        return PDF_PAGE_TOKENS
    if source.get("type") == "text":
        return text_tokens(str(source.get("data", "")))
    if source.get("type") == "content":
        return _content_tokens(source.get("content"))
    if source.get("type") == "base64":
        try:
            pdf = base64.b64decode(str(source.get("data", "")), validate=False)
        except (binascii.Error, ValueError):
            return PDF_PAGE_TOKENS
        pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf))
        return PDF_PAGE_TOKENS * max(pages, 1)
    return PDF_PAGE_TOKENS

"""The fake's own token count (`fake_messages_api.billing.api_tokens`): the API's side of the caps,
counted from the request by the documented rules, independent of the product's estimator."""

from __future__ import annotations

import base64
import struct

import pytest

from fake_messages_api.billing.api_tokens import (
    MAX_IMAGE_TOKENS,
    PDF_PAGE_TOKENS,
    TOOL_USE_SYSTEM_PROMPT,
    block_tokens,
    text_tokens,
)
from fake_messages_api.billing.prompt import prompt_blocks, prompt_tokens


@pytest.mark.parametrize(("text", "tokens"), [
    ("", 0),
    ("hello world", 2),  # a word of up to six letters is a token; one space joins for free
    ("orchestrator", 2),
    ("requestTokens", 3),  # a lower-to-upper case change starts a piece: request (2), Tokens (1)
    ("HTTPServer", 2),
    ("qXzKpvWb", 4),  # q Xz Kpv Wb: random mixed case is many pieces
    ("abcdefghijklmnopqrstu", 7),  # more than 12 lowercase letters: one token every three
    ("12345", 2),
    ('{"a":1}', 5),  # {" a ": 1 }
    ("x\n        y", 5),  # x, a newline and eight spaces (9 whitespace characters: 3 tokens), y
    ("é", 1),
    ("中文", 4),  # three UTF-8 bytes each: two tokens
    ("🙂", 2),
])
def test_text_is_counted_piece_by_piece(text: str, tokens: int) -> None:
    assert text_tokens(text) == tokens
    assert text_tokens(text * 3) >= text_tokens(text)


def test_a_request_counts_its_framing_its_tools_and_the_tool_use_system_prompt() -> None:
    request = {"model": "m", "system": "hi", "messages": [{"role": "user", "content": "hello world"}]}
    assert prompt_tokens(request) == (1 + 1) + (3 + 1 + 2)  # a system block; a message with its framing

    tool = {"name": "t", "description": "d", "input_schema": {"type": "object"}}
    with_tool = {**request, "tools": [tool]}
    tool_json = text_tokens('{"type":"object"}')
    assert prompt_tokens(with_tool) == 8 + TOOL_USE_SYSTEM_PROMPT["auto"] + 1 + 1 + tool_json
    forced = {**with_tool, "tool_choice": {"type": "tool", "name": "t"}}
    assert prompt_tokens(forced) == 8 + TOOL_USE_SYSTEM_PROMPT["forced"] + 1 + 1 + tool_json
    bash = {**request, "tools": [{"type": "bash_20250124", "name": "bash"}]}
    assert prompt_tokens(bash) == 8 + TOOL_USE_SYSTEM_PROMPT["auto"] + 245
    # The tool-use system prompt opens the cached prefix, before the tools.
    assert [b.section for b in prompt_blocks(with_tool)] == ["tools", "tools", "system", "messages"]


def test_tool_calls_and_results_count_their_names_inputs_and_content() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}
    assert block_tokens(call) == 1 + text_tokens("bash") + text_tokens('{"command":"ls"}')
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "a b"}]}
    assert block_tokens(result) == 1 + (1 + 2)
    assert block_tokens({"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b"}) == 1 + 2


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)
    return base64.b64encode(header + bytes(9)).decode()


def _gif(width: int, height: int) -> str:
    return base64.b64encode(b"GIF89a" + struct.pack("<HH", width, height) + bytes(8)).decode()


def _jpeg(width: int, height: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + bytes(14)
    frame = b"\xff\xc0" + struct.pack(">HBHH", 11, 8, height, width) + bytes(6)
    return base64.b64encode(b"\xff\xd8" + app0 + frame).decode()


def _image(data: str, media: str = "image/png") -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}


def test_an_image_costs_its_pixels_over_750_after_the_apis_resize() -> None:
    assert block_tokens(_image(_png(1000, 750))) == 1 + 1000
    assert block_tokens(_image(_gif(300, 250), "image/gif")) == 1 + 100
    assert block_tokens(_image(_jpeg(600, 500), "image/jpeg")) == 1 + 400
    huge = block_tokens(_image(_png(8000, 6000))) - 1
    assert 1500 <= huge <= MAX_IMAGE_TOKENS  # resized to about 1.15 megapixels
    by_url = {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}}
    assert block_tokens(by_url) == 1 + MAX_IMAGE_TOKENS


def test_a_pdf_costs_its_pages_and_a_text_document_its_text() -> None:
    pdf = b"%PDF-1.4\n1 0 obj << /Type /Pages /Count 3 >>\n" + b"<< /Type /Page >>\n" * 3
    document = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                               "data": base64.b64encode(pdf).decode()}}
    assert block_tokens(document) == 1 + 3 * PDF_PAGE_TOKENS
    text = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hello world"}}
    assert block_tokens(text) == 1 + 2

"""The worst-case reservation holds for token-dense text (issue 40, break 10): random letters,
base64, hex, a key. The chars/4 pieces said about half of what the tokenizer makes of them, so a
reservation could fall short by a call. A byte-level tokenizer makes at most one token of each
ASCII character: a dense run now counts that much, in every estimate the caps start from."""

from __future__ import annotations

import base64
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.llm.request_tokens import request_tokens
from shared_base import tokens
from shared_base.tokens import estimate_json_tokens, estimate_tokens

LETTERS = st.text(alphabet=string.ascii_letters, min_size=20, max_size=4000)
LOWER = st.text(alphabet=string.ascii_lowercase, min_size=20, max_size=4000)
BASE64 = st.binary(min_size=15, max_size=3000).map(lambda raw: base64.b64encode(raw).decode())
HEX = st.binary(min_size=10, max_size=2000).map(bytes.hex)
DENSE = st.one_of(LETTERS, LOWER, BASE64, HEX)
PROSE = ("The orchestrator builds software feature by feature. Each feature has a check, and the "
         "agent works until the check passes; its memory is kept short and its spending capped.\n")


@settings(max_examples=200, deadline=None)
@given(DENSE)
def test_a_dense_run_is_estimated_at_no_less_than_one_token_a_character(blob: str) -> None:
    assert estimate_tokens(blob) >= len(blob)


@settings(max_examples=100, deadline=None)
@given(st.lists(DENSE, min_size=1, max_size=4))
def test_the_worst_case_of_a_request_holds_for_dense_text_among_prose(blobs: list[str]) -> None:
    text = PROSE + "".join(f"Here is one: {blob}.\n" for blob in blobs)
    request = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": text}]}
    assert request_tokens(request) >= sum(len(blob) for blob in blobs) + estimate_tokens(PROSE)
    assert estimate_json_tokens(request["messages"]) >= sum(len(blob) for blob in blobs)


def test_prose_and_code_are_estimated_as_before() -> None:
    code = "def request_tokens(request: BookedRequest) -> int:\n    return estimate_json_tokens(request)\n"
    for text in (PROSE, code):
        assert tokens._pieces(text)[1] == 0  # no dense run: nothing counted at a character a token
        assert estimate_tokens(text) < len(text) / 2.5


def test_calibration_scales_the_pieces_but_never_a_dense_run_below_a_token_a_character() -> None:
    blob = "qXz7Kp0vWb3LmN9rTs2YhGf4" * 4
    try:
        tokens.set_calibration(0.5)
        assert estimate_tokens(blob) >= len(blob)
        assert estimate_tokens(PROSE) < tokens._pieces(PROSE)[0]
    finally:
        tokens.set_calibration(1.0)


@pytest.mark.parametrize("text", ["漢字を含む文章" * 50, "😀🎉" * 100, "Ελληνικά κείμενα " * 40, "naïve café " * 60])
def test_text_outside_ascii_is_counted_at_least_one_token_a_utf8_byte_of_it(text: str) -> None:
    # A byte-level tokenizer may make a token of each byte: a reservation from the estimate holds.
    non_ascii_bytes = sum(len(char.encode()) for char in text if not char.isascii())
    assert estimate_tokens(text) >= non_ascii_bytes

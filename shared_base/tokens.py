"""The one token estimator the program uses.

Claude's tokenizer is not published, so counts here are estimates. The estimate splits text
the way BPE tokenizers roughly do (words, numbers, punctuation; long words in pieces of four
characters) and rounds up, which lands close to, and usually a little above, what the API
reports for English prose and code. Erring high keeps budgets safe: an injection estimated
at 2000 tokens is billed at or under about 2000.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

# The pieces a BPE tokenizer roughly makes: letter runs in chunks of up to four, digit runs in
# chunks of up to three, single other characters, and runs of two or more whitespace
# characters (one newline or space joins pieces for free). Counting chunk matches gives
# ceil(run/4) per letter run and ceil(run/3) per digit run in one regex pass.
_PIECES = re.compile(r"[A-Za-z]{1,4}|\d{1,3}|[^\sA-Za-z\d]|\s{2,}")
# Token-dense text: a long run of letters, digits and base64's `+/=` with no space or other
# punctuation between (random letters, base64, hex, a key) is no words: the tokenizer makes about
# one token of every one to two characters of it, twice what the pieces above say. Each such run
# counts one token per character, the most a byte-level tokenizer can make of ASCII, so that a
# worst case reserved from the estimate holds for it. English words and code identifiers
# (split by `_`, `.`, `-`) rarely run this long; when they do, the estimate errs high.
_DENSE = re.compile(r"[A-Za-z\d+/=]{20,}")
# A character outside ASCII is one piece above, but a byte-level tokenizer may make a token of
# each of its UTF-8 bytes (CJK, emoji, rare scripts): each such character counts its bytes, so a
# worst case reserved from the estimate holds for text in any script (it errs high for most).
# Multiplier applied to the raw piece count; 1.0 unless calibrated against the API.
_calibration = 1.0
# Short texts (stored items, lines) are measured again for every feature, so their raw piece
# counts are cached; counts before calibration, so calibrating never makes the cache stale.
_CACHED_TEXT_CHARS = 1000


def estimate_tokens(text: str) -> int:
    """Estimated Claude tokens in `text` (0 for empty text)."""
    if not text:
        return 0
    return _calibrated(*(_cached_pieces(text) if len(text) <= _CACHED_TEXT_CHARS else _pieces(text)))


def _calibrated(pieces: int, dense: int) -> int:
    """The estimate of `pieces` (scaled by the calibration) and `dense` tokens (never scaled down:
    one a character is already the most there can be)."""
    return math.ceil(pieces * _calibration) + dense


def _pieces(text: str) -> tuple[int, int]:
    """The pieces of `text` outside its token-dense runs, and the tokens that are no piece: the
    characters of those runs and the bytes of non-ASCII characters past their first."""
    pieces = len(_PIECES.findall(text))
    dense = len(text.encode("utf-8", "surrogatepass")) - len(text)  # the bytes past one a character
    for run in _DENSE.findall(text):
        pieces -= len(_PIECES.findall(run))
        dense += len(run)
    return pieces, dense


@lru_cache(maxsize=4096)  # stored items and lines: a few hundred a feature at most
def _cached_pieces(text: str) -> tuple[int, int]:
    return _pieces(text)


def estimate_json_tokens(value: Any) -> int:
    """Estimated tokens of `value` serialized as compact JSON.

    Not cached: serialized values (a conversation's messages, a request) are seen once, and
    caching them filled the cache with text never asked for again (two a feature, held for
    thousands of features)."""
    return _calibrated(*_pieces(json.dumps(value, ensure_ascii=False, separators=(",", ":"))))


def set_calibration(factor: float) -> None:
    """Scale future estimates, e.g. by API-counted / estimated tokens for a sample."""
    global _calibration
    if not (0.25 <= factor <= 4.0):
        raise ValueError(f"calibration factor {factor} is implausible")
    _calibration = factor


def calibrate(count_api_tokens: Callable[[str], int], samples: Sequence[str]) -> float:
    """Calibrate against the API: `count_api_tokens(text)` returns the API's count for `text`
    alone (e.g. `client.messages.count_tokens(...)` for a one-message request, minus that of a
    one-character message, which removes the request's fixed overhead). Sets and returns the
    factor API / estimate over all samples; raises ValueError if it is implausible."""
    estimated = sum(_pieces(sample)[0] for sample in samples)
    counted = sum(count_api_tokens(sample) for sample in samples)
    if estimated <= 0:
        raise ValueError("calibration needs non-empty samples")
    set_calibration(counted / estimated)
    return _calibration

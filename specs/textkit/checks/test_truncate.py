"""Feature truncate: `textkit.truncate(text, max_length, ellipsis="...", *, whole_words=False)`."""

import pytest

from textkit import truncate

FOX = "The quick brown fox"


def test_short_text_is_unchanged():
    assert truncate("Hello", 10) == "Hello"
    assert truncate("Hello", 5) == "Hello"


def test_cut_with_ellipsis():
    assert truncate("Hello, world", 8) == "Hello..."
    assert truncate(FOX, 14) == "The quick b..."
    assert truncate("Hello world again", 9) == "Hello..."  # whitespace before the ellipsis goes


def test_custom_ellipsis():
    assert truncate("Hello, world", 6, ellipsis="…") == "Hello…"
    assert truncate("abcdef", 3, ellipsis="") == "abc"


def test_whole_words():
    assert truncate(FOX, 12, whole_words=True) == "The quick..."
    assert truncate(FOX, 14, whole_words=True) == "The quick..."
    assert truncate("Supercalifragilistic", 10, whole_words=True) == "Superca..."


def test_never_longer_than_max_length():
    for n in range(3, 25):
        assert len(truncate(FOX, n)) <= n
        assert len(truncate(FOX, n, whole_words=True)) <= n


def test_bad_lengths():
    with pytest.raises(ValueError):
        truncate("Hello world", 2)  # shorter than the ellipsis
    with pytest.raises(ValueError):
        truncate("Hello", -1, ellipsis="")

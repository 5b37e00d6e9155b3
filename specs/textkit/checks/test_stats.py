"""Feature text-stats: `textkit.text_stats(text)`."""

from textkit import text_stats


def test_example():
    text = "Hello world. How are you?\nFine, thanks!"
    assert text_stats(text) == {
        "characters": 39,
        "words": 7,
        "lines": 2,
        "sentences": 3,
        "average_word_length": 4.14,
    }


def test_empty_text():
    assert text_stats("") == {
        "characters": 0, "words": 0, "lines": 0, "sentences": 0, "average_word_length": 0.0,
    }


def test_punctuation_is_not_part_of_words():
    stats = text_stats("Wait... what?!")
    assert (stats["words"], stats["sentences"], stats["average_word_length"]) == (2, 2, 4.0)
    assert text_stats(" - ... ")["words"] == 0


def test_lines_and_sentences():
    assert text_stats("one\ntwo\n")["lines"] == 2
    assert text_stats("no final stop here")["sentences"] == 1
    assert isinstance(text_stats("a b")["average_word_length"], float)

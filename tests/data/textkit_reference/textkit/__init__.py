"""textkit: small text utilities (slugs, wrapping, case conversion, statistics, truncation)."""

import re
import string
import unicodedata

__version__ = "0.1.0"
__all__ = ["slugify", "wrap", "fill", "split_words", "snake_case", "kebab_case", "camel_case",
           "text_stats", "truncate"]


def slugify(text: str, separator: str = "-") -> str:
    """Lowercase ASCII words of `text` joined by `separator`; accents are stripped."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return separator.join(re.findall(r"[a-z0-9]+", ascii_text.lower()))


def wrap(text: str, width: int = 70) -> list[str]:
    """Greedy word wrap: lines of at most `width` characters; words are never broken."""
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def fill(text: str, width: int = 70) -> str:
    """`wrap(text, width)` joined with newlines."""
    return "\n".join(wrap(text, width))


def split_words(text: str) -> list[str]:
    """Words of `text`, split at non-alphanumerics and at case changes ("getHTTPCode")."""
    words: list[str] = []
    for chunk in re.findall(r"[A-Za-z0-9]+", text):
        words += re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]*[a-z0-9]*[a-z0-9]|[A-Z]+", chunk)
    return words


def snake_case(text: str) -> str:
    """`split_words(text)` lowercased and joined by "_"."""
    return "_".join(word.lower() for word in split_words(text))


def kebab_case(text: str) -> str:
    """`split_words(text)` lowercased and joined by "-"."""
    return "-".join(word.lower() for word in split_words(text))


def camel_case(text: str) -> str:
    """First word lowercased, the others capitalized, joined: "hello world" -> "helloWorld"."""
    words = split_words(text)
    return "".join([w.lower() for w in words[:1]] + [w.capitalize() for w in words[1:]])


def text_stats(text: str) -> dict:
    """Counts of characters, words, lines and sentences, and the average word length."""
    words = [w for w in (token.strip(string.punctuation) for token in text.split()) if w]
    return {
        "characters": len(text),
        "words": len(words),
        "lines": len(text.splitlines()),
        "sentences": sum(1 for part in re.split(r"[.!?]+", text) if part.strip()),
        "average_word_length": round(sum(map(len, words)) / len(words), 2) if words else 0.0,
    }


def truncate(text: str, max_length: int, ellipsis: str = "...", *, whole_words: bool = False) -> str:
    """`text` cut to at most `max_length` characters, ending with `ellipsis` when cut."""
    if max_length < max(0, len(ellipsis)):
        raise ValueError(f"max_length {max_length} is shorter than the ellipsis {ellipsis!r}")
    if len(text) <= max_length:
        return text
    keep = max_length - len(ellipsis)
    cut = text[:keep]
    if whole_words and not text[keep].isspace():
        cut = re.sub(r"\s\S*$", "", cut) if re.search(r"\s", cut) else cut
    return cut.rstrip() + ellipsis

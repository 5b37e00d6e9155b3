"""What the demo model writes: a textkit that passes every check of `specs/textkit`.

File contents as the scripted agent creates them; `textkit_plan` decides which
feature writes what, and when it writes the deliberately wrong versions below.
"""


SKELETON_INIT = r'''"""textkit: small text utilities, standard library only."""

__version__ = "0.1.0"
'''

PYPROJECT = r'''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "textkit"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []
'''

SCRIPTS_TABLE = r'''
[project.scripts]
textkit = "textkit.cli:main"
'''

SLUGIFY_WITHOUT_ACCENTS = r'''"""URL-safe slugs."""

import re


def slugify(text: str, separator: str = "-") -> str:
    """Lowercase letters and digits of `text`, runs of anything else as one `separator`."""
    return separator.join(re.findall(r"[a-z0-9]+", text.lower()))
'''

SLUGIFY = r'''"""URL-safe slugs."""

import re
import unicodedata


def slugify(text: str, separator: str = "-") -> str:
    """Lowercase ASCII letters and digits of `text`, runs of anything else as one `separator`."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return separator.join(re.findall(r"[a-z0-9]+", ascii_text.lower()))
'''

WRAP = r'''"""Greedy word wrapping that never breaks a word."""


def wrap(text: str, width: int = 70) -> list[str]:
    """The words of `text` in lines of at most `width` characters (a longer word stands alone)."""
    if width < 1:
        raise ValueError(f"width must be at least 1, not {width}")
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            if current:
                lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def fill(text: str, width: int = 70) -> str:
    """`wrap(text, width)` joined with newlines."""
    return "\n".join(wrap(text, width))
'''

CASE = r'''"""Splitting identifiers into words and joining them in snake, kebab or camel case."""

import re

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")


def split_words(text: str) -> list[str]:
    """The words of `text`: ASCII letter and digit runs, split again at case changes."""
    words: list[str] = []
    for chunk in re.findall(r"[A-Za-z0-9]+", text):
        words.extend(_WORD.findall(chunk))
    return words


def snake_case(text: str) -> str:
    """The words of `text`, lowercased, joined with `_`."""
    return "_".join(word.lower() for word in split_words(text))


def kebab_case(text: str) -> str:
    """The words of `text`, lowercased, joined with `-`."""
    return "-".join(word.lower() for word in split_words(text))


def camel_case(text: str) -> str:
    """The first word lowercased, the others capitalized, joined with nothing."""
    words = split_words(text)
    if not words:
        return ""
    return words[0].lower() + "".join(word.capitalize() for word in words[1:])
'''

STATS = r'''"""Counting characters, words, lines and sentences."""

import re
import string


def text_stats(text: str) -> dict:
    """Characters, words, lines, sentences and the average word length of `text`."""
    words = [token.strip(string.punctuation) for token in text.split()]
    words = [word for word in words if word]
    sentences = [piece for piece in re.split(r"[.!?]+", text) if piece.strip()]
    average = round(sum(map(len, words)) / len(words), 2) if words else 0.0
    return {
        "characters": len(text),
        "words": len(words),
        "lines": len(text.splitlines()),
        "sentences": len(sentences),
        "average_word_length": float(average),
    }
'''

TRUNCATE = r'''"""Shortening text to a length, ellipsis included."""


def truncate(text: str, max_length: int, ellipsis: str = "...", *, whole_words: bool = False) -> str:
    """`text` cut to at most `max_length` characters, ending with `ellipsis` when cut."""
    if len(text) <= max_length and max_length >= 0:
        return text
    if max_length < 0 or max_length < len(ellipsis):
        raise ValueError(f"max_length {max_length} leaves no room for the ellipsis {ellipsis!r}")
    keep = max_length - len(ellipsis)
    kept = text[:keep]
    if whole_words and keep < len(text) and not text[keep].isspace():
        space = max(kept.rfind(" "), kept.rfind("\t"), kept.rfind("\n"))
        if space > 0:
            kept = kept[:space]
    return kept.rstrip() + ellipsis
'''

CLI = r'''"""The command line: `python -m textkit COMMAND [options] [TEXT]`."""

import argparse
import json
import sys

from textkit import __version__, camel_case, fill, kebab_case, slugify, snake_case, text_stats, truncate

_CASES = {"snake": snake_case, "kebab": kebab_case, "camel": camel_case}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textkit", description="Small text utilities.")
    parser.add_argument("--version", action="version", version=f"textkit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    slug = commands.add_parser("slugify", help="a URL-safe slug")
    slug.add_argument("--separator", default="-")
    wrap = commands.add_parser("wrap", help="wrap text into lines")
    wrap.add_argument("--width", type=int, default=70)
    case = commands.add_parser("case", help="snake, kebab or camel case")
    case.add_argument("style", choices=sorted(_CASES))
    commands.add_parser("stats", help="text statistics as JSON")
    cut = commands.add_parser("truncate", help="shorten text with an ellipsis")
    cut.add_argument("--length", type=int, required=True)
    cut.add_argument("--ellipsis", default="...")
    cut.add_argument("--whole-words", action="store_true")
    for command in commands.choices.values():
        command.add_argument("text", nargs="?", help="the text (default: standard input)")
    return parser


def _result(args: argparse.Namespace, text: str) -> str:
    if args.command == "slugify":
        return slugify(text, args.separator)
    if args.command == "wrap":
        return fill(text, args.width)
    if args.command == "case":
        return _CASES[args.style](text)
    if args.command == "stats":
        return json.dumps(text_stats(text))
    return truncate(text, args.length, args.ellipsis, whole_words=args.whole_words)


def main(argv: list[str] | None = None) -> int:
    """Run one command and print its result; returns the exit status."""
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    text = args.text if args.text is not None else sys.stdin.read().rstrip("\n")
    print(_result(args, text))
    return 0
'''

MAIN = r'''"""`python -m textkit`."""

import sys

from textkit.cli import main

sys.exit(main())
'''

FINAL_INIT = r'''"""textkit: small text utilities, standard library only."""

from textkit.case import camel_case, kebab_case, snake_case, split_words
from textkit.slugify import slugify
from textkit.stats import text_stats
from textkit.truncate import truncate
from textkit.wrap import fill, wrap

__version__ = "0.1.0"
__all__ = ["camel_case", "fill", "kebab_case", "slugify", "snake_case", "split_words", "text_stats", "truncate", "wrap"]
'''

README = r'''# textkit

Small text utilities for Python 3.11+, standard library only.

```python
>>> from textkit import slugify, wrap, fill, split_words, snake_case, kebab_case, camel_case
>>> from textkit import text_stats, truncate
>>> slugify("Héllo Wörld")
'hello-world'
>>> wrap("The quick brown fox", 10)
['The quick', 'brown fox']
>>> print(fill("The quick brown fox", 10))
The quick
brown fox
>>> split_words("getHTTPResponseCode")
['get', 'HTTP', 'Response', 'Code']
>>> snake_case("HTTPServer error")
'http_server_error'
>>> kebab_case("someVariableName")
'some-variable-name'
>>> camel_case("snake_case_name")
'snakeCaseName'
>>> text_stats("Hello world.")
{'characters': 12, 'words': 2, 'lines': 1, 'sentences': 1, 'average_word_length': 5.0}
>>> truncate("The quick brown fox", 14, whole_words=True)
'The quick...'

```

## Command line

    python -m textkit slugify "Hello World"          # hello-world
    python -m textkit case snake someVariableName    # some_variable_name
    python -m textkit truncate --length 8 "Hello, world"
'''


def final_tree() -> dict[str, str]:
    """The files of textkit as the demo leaves it (relative path -> text): a complete
    implementation of `specs/textkit`. `tests/e2e/demo/test_example_specs_e2e.py` runs every check of the
    spec against it, and `tests/e2e/demo/test_demo_e2e.py` checks that the demo ends with exactly these."""
    return {
        "pyproject.toml": PYPROJECT + SCRIPTS_TABLE, "README.md": README, "textkit/__init__.py": FINAL_INIT,
        "textkit/__main__.py": MAIN, "textkit/cli.py": CLI, "textkit/slugify.py": SLUGIFY, "textkit/wrap.py": WRAP,
        "textkit/case.py": CASE, "textkit/stats.py": STATS, "textkit/truncate.py": TRUNCATE,
    }

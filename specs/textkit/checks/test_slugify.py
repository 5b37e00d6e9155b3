"""Feature slugify: `textkit.slugify(text, separator="-")`."""

import pytest

from textkit import slugify


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello World", "hello-world"),
        ("  Hello,   World!  ", "hello-world"),
        ("Héllo Wörld", "hello-world"),
        ("ÉCOLE Privée", "ecole-privee"),
        ("C'est déjà l'été", "c-est-deja-l-ete"),
        ("snake_case and kebab-case", "snake-case-and-kebab-case"),
        ("Python 3.11 is out", "python-3-11-is-out"),
        ("already-a-slug", "already-a-slug"),
        ("---", ""),
        ("", ""),
        ("日本語", ""),
    ],
)
def test_slugify(text, expected):
    assert slugify(text) == expected


def test_separator():
    assert slugify("Hello World, again", separator="_") == "hello_world_again"
    assert slugify("  a - b  ", "+") == "a+b"

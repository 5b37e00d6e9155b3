"""Feature docs: README.md with working examples, docstrings, `__all__`."""

import doctest
import inspect
import re
from pathlib import Path

import textkit

API = ["slugify", "wrap", "fill", "split_words", "snake_case", "kebab_case", "camel_case",
       "text_stats", "truncate"]


def test_public_api():
    assert sorted(textkit.__all__) == sorted(API)
    for name in API:
        assert inspect.getdoc(getattr(textkit, name)), f"{name} has no docstring"


def test_readme_covers_the_api():
    text = Path("README.md").read_text(encoding="utf-8")
    assert text.startswith("# textkit\n")
    examples = [line for line in text.splitlines() if line.lstrip().startswith(">>> ")]
    for name in API:
        assert any(re.search(rf"\b{name}\(", line) for line in examples), f"no example of {name}"
    assert "python -m textkit" in text


def test_readme_examples_pass():
    result = doctest.testfile(str(Path("README.md").resolve()), module_relative=False)
    assert result.attempted >= len(API)
    assert result.failed == 0, "a README example fails: see the doctest report in the captured stdout"

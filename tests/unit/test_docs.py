"""The documentation a newcomer reads: a README short enough to read, and links that lead somewhere.

The README says what the program is and how to start; everything else is in `docs/` pages by
topic, each linked from it. A relative link (a file, a file's heading, or a heading of the same
page) that leads nowhere fails here, so a page moved or a heading renamed cannot strand a reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 400
PAGES = [ROOT / "README.md", ROOT / "DEVELOPING.md", *sorted((ROOT / "docs").glob("*.md"))]
TOPIC_PAGES = ["usage", "spec", "configuration", "how-a-run-works", "context-agent", "parallel-and-ci",
               "security", "claude-code", "benchmarks", "history", "verification", "agent-view"]

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")


def _links(text: str) -> list[str]:
    prose = _CODE.sub("", _FENCE.sub("", text))
    return [target for target in _LINK.findall(prose) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            slug = _slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_the_readme_is_short_enough_to_read() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into a docs/ page and link it"


def test_the_readme_links_every_topic_page() -> None:
    linked = {target.split("#")[0] for target in _links((ROOT / "README.md").read_text(encoding="utf-8"))}
    missing = [name for name in TOPIC_PAGES if f"docs/{name}.md" not in linked]
    assert not missing, f"README.md links no docs page for: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page.read_text(encoding="utf-8")):
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
            broken.append(f"{target}: no heading #{anchor} in {destination.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)

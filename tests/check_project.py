"""A small project whose check files `protected_files` can find: the set-up both halves of
`test_protect` (unit and e2e) start from."""

from __future__ import annotations

from pathlib import Path

CHECK_PROJECT_FILES = {
    "src/app.py": "def main():\n    return 1\n",
    "tests/test_app.py": "from src.app import main\n\ndef test_main():\n    assert main() == 2\n",
    "tests/helpers.py": "X = 1\n",
    "tests/__pycache__/test_app.cpython-311.pyc": "cache",
    "tests/data/input.txt": "42\n",
    "check.sh": "#!/bin/sh\npython3 -m pytest tests -q\n",
    ".autonomous/state/execution-state.json": "{}",
}


def write_check_project(tmp_path: Path) -> Path:
    """`tmp_path/project` with the files above, and `tmp_path/outside.py` beside it (outside the project)."""
    root = (tmp_path / "project").resolve()
    for relative, text in CHECK_PROJECT_FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    (tmp_path / "outside.py").write_text("outside")
    return root


def names(root: Path, paths: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]

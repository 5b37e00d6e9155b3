"""Packages are sized by concept: no package folder holds more than `MAX_TOP_LEVEL_MODULES`
.py modules at its top level (`__init__.py` counts), so a newcomer opening one reads a handful
of names, and a folder that grows past it is split into subpackages by what its modules do."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "context_agent", "shared_base", "fake_messages_api")
MAX_TOP_LEVEL_MODULES = 15


def _package_folders() -> list[Path]:
    return sorted(init.parent for package in PACKAGES for init in (ROOT / package).rglob("__init__.py"))


def _top_level_modules(folder: Path) -> int:
    return sum(1 for path in folder.glob("*.py"))


@pytest.mark.parametrize("folder", _package_folders(), ids=lambda folder: str(folder.relative_to(ROOT)))
def test_no_package_folder_holds_more_than_fifteen_modules(folder):
    count = _top_level_modules(folder)
    assert count <= MAX_TOP_LEVEL_MODULES, (
        f"{folder.relative_to(ROOT)} holds {count} modules: group them into subpackages by concept"
    )


"""docs/configuration.md is the settings model's own documentation, regenerated, never hand-edited.

A setting added, renamed or re-described in `orchestrator/config.py` without running
`python3 scripts/config_docs.py` fails here, so the page cannot drift from what a run accepts.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from orchestrator.config import RunConfig

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_docs", ROOT / "scripts" / "config_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_page_is_what_the_script_writes() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == _script().render(), "docs/configuration.md is stale: run python3 scripts/config_docs.py"


def test_every_setting_is_on_the_page_with_its_description() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name, field in RunConfig.model_fields.items():
        if name in ("pricing", "security", "sandbox_options"):
            continue
        assert f"`{name}`" in page and f"`ORCHESTRATE_{name.upper()}`" in page, name
        assert field.description and field.description.replace("|", "\\|") in page, name

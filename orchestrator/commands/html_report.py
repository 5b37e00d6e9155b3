"""stub"""
from __future__ import annotations
from pathlib import Path
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.paths import ProjectPaths

def write_html_report(paths: ProjectPaths, target: Path) -> int:
    return 0

def write_html_after_run(paths: ProjectPaths, target: Path, loaded: LoadedSpec | None = None) -> None:
    pass

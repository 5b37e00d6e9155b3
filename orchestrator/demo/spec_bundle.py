"""The textkit spec shipped inside the package, so that `orchestrate demo` runs from an install.

`textkit_spec.json` holds every file of `specs/textkit` (spec, README, checks) as
``{"files": {relative path: text}}``. A test keeps it equal to the directory; after changing
the spec, rebuild it with ``python -m orchestrator.demo.spec_bundle specs/textkit``.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

BUNDLE_NAME = "textkit_spec.json"


def bundled_files() -> dict[str, str]:
    """Relative path -> text of every file of the shipped textkit spec."""
    raw = resources.files(__package__ or "orchestrator.demo").joinpath(BUNDLE_NAME).read_text("utf-8")
    files: dict[str, str] = json.loads(raw)["files"]
    return files


def directory_files(spec_dir: Path) -> dict[str, str]:
    """Relative path -> text of every file under `spec_dir` (caches left out)."""
    return {
        path.relative_to(spec_dir).as_posix(): path.read_text("utf-8")
        for path in sorted(spec_dir.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def write_spec(target: Path) -> Path:
    """Write the textkit spec directory to `target`; returns the path of its spec.json."""
    for relative, content in bundled_files().items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return target / "spec.json"


def main(argv: list[str]) -> int:
    """Rebuild the bundle from a spec directory (the repository's specs/textkit)."""
    if len(argv) != 1:
        sys.stderr.write("usage: python -m orchestrator.demo.spec_bundle SPEC_DIR\n")
        return 2
    bundle = {"files": directory_files(Path(argv[0]))}
    Path(__file__).with_name(BUNDLE_NAME).write_text(json.dumps(bundle, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

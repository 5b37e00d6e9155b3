"""The example specs shipped in `specs/`, one test case each (`test_example_specs` in both halves),
and the demo's spec cut short for tests that need only its first features."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.demo.spec_bundle import write_spec as write_demo_spec

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted(ROOT.glob("specs/*/spec.json"))

per_spec = pytest.mark.parametrize("spec_path", SPECS, ids=[p.parent.name for p in SPECS])


def first_demo_features(directory: Path, count: int) -> Path:
    """The demo's textkit spec (its checks beside it) written to `directory`, cut to its first `count` features."""
    spec = write_demo_spec(directory)
    document = json.loads(spec.read_text())
    document["features"] = document["features"][:count]
    spec.write_text(json.dumps(document))
    return spec

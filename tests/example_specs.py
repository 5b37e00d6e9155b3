"""The example specs shipped in `specs/`, one test case each (`test_example_specs` in both halves)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted(ROOT.glob("specs/*/spec.json"))

per_spec = pytest.mark.parametrize("spec_path", SPECS, ids=[p.parent.name for p in SPECS])

"""The example specs in `specs/` are valid: for every `specs/<name>/spec.json`, it loads without a
warning, and every feature has its own check, a pytest file shipped in `specs/<name>/checks/` and
reached through `$ORCHESTRATE_SPEC_DIR` (each file used once). That those checks fail in an empty
project and pass against a reference implementation is `tests/e2e/demo/test_example_specs_e2e.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

from orchestrator.spec.load import load_spec
from tests.example_specs import SPECS, per_spec

CHECK_REF = re.compile(r'"\$ORCHESTRATE_SPEC_DIR/checks/([A-Za-z0-9_.-]+\.py)"')


def test_there_is_an_example_spec():
    assert SPECS, "specs/ holds no <name>/spec.json"


@per_spec
def test_spec_is_valid(spec_path: Path):
    loaded = load_spec(spec_path)
    assert loaded.warnings == []
    assert loaded.spec.project == spec_path.parent.name
    assert 6 <= len(loaded.spec.features) <= 10
    used = []
    for feature in loaded.spec.features:
        assert feature.acceptance, f"{feature.id}: no acceptance criteria"
        assert feature.verify, f"{feature.id}: no check of its own"
        names = CHECK_REF.findall(feature.verify)
        assert len(names) == 1, f"{feature.id}: verify should run one shipped check file"
        assert (spec_path.parent / "checks" / names[0]).is_file(), f"{feature.id}: {names[0]}"
        used += names
    shipped = sorted(p.name for p in (spec_path.parent / "checks").glob("test_*.py"))
    assert sorted(used) == shipped, "every check file belongs to exactly one feature"



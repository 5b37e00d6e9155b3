"""The example specs in `specs/` really run: valid, and their checks are honest.

For every `specs/<name>/spec.json`:
- it loads without a warning, and every feature has its own check, a pytest file shipped in
  `specs/<name>/checks/` and reached through `$ORCHESTRATE_SPEC_DIR` (each file used once);
- in an empty project directory every check fails (nothing is built yet), and leaves no file
  behind, neither in the project nor beside the spec;
- every check passes against a reference implementation: the checks can be satisfied. For
  `textkit` it is what the demo model builds (`orchestrator.demo.textkit_sources.final_tree`,
  which `test_demo_e2e` holds to what the demo really leaves); for another spec, a copy of
  `tests/data/<name>_reference/` when that exists (test data only).

The checks run exactly as a run runs them: the feature's own `verify` command through
`orchestrator.run.checks.check_command.run_check` (bash, the project as cwd, `ORCHESTRATE_SPEC_DIR` set), with
`python3` on PATH standing for the interpreter running these tests.
"""

from __future__ import annotations

import re
from pathlib import Path
import pytest
from orchestrator.spec.load import load_spec



ROOT = Path(__file__).resolve().parents[3]
SPECS = sorted(ROOT.glob("specs/*/spec.json"))
CHECK_REF = re.compile(r'"\$ORCHESTRATE_SPEC_DIR/checks/([A-Za-z0-9_.-]+\.py)"')

per_spec = pytest.mark.parametrize("spec_path", SPECS, ids=[p.parent.name for p in SPECS])


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



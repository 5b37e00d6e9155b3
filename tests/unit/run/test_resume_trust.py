"""Resume without a sandbox believes `passed` only with the feature's log and its checkpoint.

The red team's run: the agent appended a forged `passed` line to the state journal and killed
the orchestrator; on resume a feature whose check is `false` was passed and the run exited 0.
"""

from __future__ import annotations

from pathlib import Path

from tests.resume_trust import doubted, passed_feature

# ---- the rule, one case at a time -----------------------------------------------------------


def test_passes_true_in_the_spec_is_the_users_word(tmp_path: Path) -> None:
    paths, spec, state = passed_feature(tmp_path, git_repo=False)
    spec.features[0].passes = True
    assert doubted(paths, spec, state) == []

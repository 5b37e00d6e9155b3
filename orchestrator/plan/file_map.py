"""A compact map of an existing project's files, for the planner and the check writer.

The model plans against what is there: the paths (with sizes) of the project's files,
directories first, leaving out what no feature is about (VCS data, caches, virtualenvs,
`.autonomous/`). Bounded, so a huge tree costs a known number of tokens.
"""

from __future__ import annotations

# Also the feature prompt's `## Workspace` map (`run/attempt/agent_view`): one walk for both.
from orchestrator.run.attempt.agent_view import MAX_ENTRIES, SKIP_DIRS, project_file_map

__all__ = ["MAX_ENTRIES", "SKIP_DIRS", "project_file_map"]

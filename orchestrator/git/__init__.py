"""Every git command the program runs: `run_git` (safe config, to the end, never half done),
checkpoints, the working tree as git sees it, worktrees for `--jobs`, the `--branch` worktree, a
stale index lock, and the filter on what orchestrate's own commits may hold.

May import `orchestrator.{store,safety,errors}`; never `run`, `merge` or `commands`.
"""

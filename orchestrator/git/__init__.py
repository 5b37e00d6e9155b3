"""Every git command the program runs: `run_git`, the only place git starts (`hardening`: never
into a submodule, no program from the repository's config; `repository_guard`: never a `.git`
the agent made; to the end, never half done), `state_guard` (a cloned `.autonomous/` is refused),
checkpoints, the working tree as git sees it, worktrees for `--jobs`, the `--branch` worktree, a
stale index lock, and the filter on what orchestrate's own commits may hold.

May import `orchestrator.{store,safety,errors}`; never `run`, `merge` or `commands`.
"""

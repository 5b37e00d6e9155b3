"""Beyond one machine: a shard's artifact (`orchestrate export`) and the combine step that adds
shards up (`orchestrate combine`).

- `artifact`: what a shard leaves: its branch as a git bundle, its `.autonomous/` records (state,
  feature logs, context stores; no events, backups, worktrees or working memory), a manifest.
- `integration`: the integration worktree of the combined branch, and the seam `CheckpointApplier`
  that applies one feature's checkpoint commit there and re-checks it.
- `final_check`: final verification, every passed feature's check on the combined tree.
- `state_union`, `records`: the states, feature logs and Context Agent stores, unioned.
- `plan`: which artifact's work each feature takes, in dependency order.

May import: run (checkpoint, git_safety, verify, scheduler), store, spec, safety, context_agent.
"""

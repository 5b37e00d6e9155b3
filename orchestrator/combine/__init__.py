"""Beyond one machine: a shard's artifact (`orchestrate export`) and the combine step that adds
shards up (`orchestrate combine`).

- `artifact`: what a shard leaves: its branch as a git bundle, its `.autonomous/` records (state,
  feature logs, context stores; no events, backups, worktrees or working memory), a manifest.
- `integration`: the combined branch's git bookkeeping, and `CherryPick`, the merge queue's
  `Landing` that brings one feature's checkpoint commit onto it.
- `landing`: the parallel workers' merge queue (`orchestrator.merge.queue`) with that landing
  and the parallel run's re-check (own check, then the regression guard's affected set).
- `final_check`: final verification, every passed feature's check on the combined tree.
- `state_union`: the states and feature logs unioned (the Context Agent stores: `context_agent.memory.store_union`).
- `step`: the combine step itself, feature by feature in dependency order.

May import: run (checkpoint, git_safety, verify, scheduler, merge_queue, regression, parallel_integrity,
integrity, check_pool, worktrees, feature_logs), store, spec, safety, context_agent.
"""

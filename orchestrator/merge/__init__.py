"""Bringing a feature's work onto a branch, one at a time and checked: the merge queue, merge
batches, where and how work lands, the user's edits kept aside, and the focused conflict step.
Used by `--jobs N` (`orchestrator.run.parallel`) and by `combine`.

May import `orchestrator.{git,store,llm,spec,safety}`; never `run` (a re-check is passed in).
"""

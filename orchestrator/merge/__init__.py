"""Bringing a feature's work onto a branch: the merge queue, its batches, landing, conflicts (used by `--jobs` and `combine`)."""

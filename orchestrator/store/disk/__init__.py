"""Files under `.autonomous/` at the lowest level: atomic writes and removals, reads that refuse links, the run lock, the paths."""

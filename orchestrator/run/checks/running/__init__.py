"""Running a check: the command, its pytest outcome, batches and the pool of re-runs."""

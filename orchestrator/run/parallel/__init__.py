"""`--jobs N`: the scheduler of workers, their slots, the shared books, the background summary."""

"""What the show-only commands show of a feature's next request (`context`, `run --dry-run`, `context --count`)."""

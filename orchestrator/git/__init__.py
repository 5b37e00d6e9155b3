"""Every git command the program runs: checkpoints, the tree as git sees it, worktrees, the index lock."""

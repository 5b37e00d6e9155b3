"""Claude Code as the agent (`--agent claude-code`)."""

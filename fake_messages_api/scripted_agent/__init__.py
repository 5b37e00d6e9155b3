"""The fake's scripted model: plans per feature, reading a turn, Claude Code's tool calls, forced tools, the summarizer, conflicts."""

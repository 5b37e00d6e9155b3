"""Claude Code as the coding agent (`--agent claude-code`), through Anthropic's Agent SDK.

Each attempt is a fresh Claude Code session (`agent.ClaudeCodeAgent`) given the same prompt as
the built-in loop, with `report_feature` served in-process (`report_server`), writes to
protected files refused (`write_guard`), its CLI started through this program's sandbox with an
environment of its own (`launch`), and its message stream recorded as the built-in loop's
turns are (`stream`). `availability` says whether the optional extra is installed. Its calls
are paid through the metering proxy (`metering_proxy`) or on the user's Claude plan (`billing`).
"""

"""Claude Code as the coding agent (`--agent claude-code`), through Anthropic's Agent SDK.

Each attempt is a fresh Claude Code session (`agent.ClaudeCodeAgent`) given the same prompt as
the built-in loop: `session/` starts its CLI through this program's sandbox with an environment
of its own (`launch`), gives it its options and `report_feature` in-process, and records its
message stream as the built-in loop's turns; `guards/` refuses writes to protected files and
keeps the CLI's sign-in from the agent. `availability` says whether the optional extra is
installed, `choice` which agent a run asks for. Its calls are paid through the metering proxy
(`metering/`) or on the user's Claude plan (`billing`).
"""

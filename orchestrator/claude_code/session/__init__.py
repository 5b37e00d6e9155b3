"""One Claude Code session per attempt: how it is started, what it is given, what it said.

    launch          the CLI started with its own environment, home and sandbox
    options         `ClaudeAgentOptions` for one attempt, built in one place
    project_config  the project's own Claude Code configuration, as the user allows it
    report_server   `report_feature` served in-process as an SDK MCP server
    stream          the message stream recorded as the built-in loop's turns
"""

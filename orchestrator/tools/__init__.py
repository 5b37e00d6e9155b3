"""The agent's tools and the rules that confine them to the project.

Owns: the tool registry (`registry.TOOLS`: one `Tool(name, definition, handler, summary)` per
tool, each defined in its own module: `bash`, `editor`, `report`), running a call (`dispatch`),
path confinement (`confinement`), the bash deny-list (`shell_policy`, `shell_rules`), and
fitting output for the model (`truncation`). The report's strict parser (`report.parse_report`)
is the tool's; the Context Agent reads reports leniently with its own.

May import: `orchestrator.store` (paths), `orchestrator.safety` (secrets, process groups) and
the standard library / pydantic. Never `orchestrator.run`, `orchestrator.commands` or the CLI
(the arrows: commands -> run -> (context_agent, tools) -> store -> llm/spec/safety).

    dispatch.execute_tool(name, input, ctx) -> ToolResult   run one tool call; never raises for model input
    registry.tool_definitions()                    the tool params sent to the API
    registry.summarize_input(name, input)          a short redacted line for the event log
    context.ToolContext                            project root, protected files, limits, policy
    shell_policy.ShellPolicy                       the bash deny-list

Adding a tool: a module defining `TOOL = Tool(...)`, and its name in `registry.TOOLS`.
See `confinement` (paths), `shell_policy` (bash deny-list), `orchestrator.safety.credentials.secrets` (environment
and redaction) and `orchestrator.run.checks.protection.protect` (check files) for the security rules.
"""

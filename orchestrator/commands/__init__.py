"""The user-facing commands: `run` (with `--dry-run`), `status`, `logs`, `context`, `summarize`.

Each command takes what `orchestrator.cli.commands` parsed (a spec, a project, a `RunConfig`), does its
work and returns an exit code, or raises `orchestrator.user_errors.UsageError` for a problem the user
can fix; it never exits itself. This package also owns what the user reads: the live and plain
views and `--json` lines, tables (`rendering/`), the reports (`report/`: HTML, JSON, JUnit) and the
show-only view of a feature's next request (`prompt_preview/`).

May import: every `orchestrator` subpackage (`run`, `store`, `llm`, `spec`, `tools`, `safety`),
`orchestrator.config`, `orchestrator.user_errors`, and `context_agent`. Nothing imports it but
`orchestrator.cli.commands`.
"""

"""orchestrator.store: everything the program keeps on disk, and the one model of each format.

It owns `.autonomous/` (`paths`), crash-safe writes (`atomic`), the run state (`run_state`, the
model; `state`, its snapshot and journal; `spend_journal`, money per model call), the feature
logs (`feature_log`), the working-memory log (`working_memory`, `memory_entries`), the events
(`event_kinds`, the union the event log and the renderers share; `events`, the sink) and the
run lock (`lock`).

It may import `orchestrator.llm` (token usage), `orchestrator.spec` (feature ids) and
`orchestrator.safety` (redaction), never `run`, `commands`, `tools` or `context_agent`.
"""

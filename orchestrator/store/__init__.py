"""orchestrator.store: everything the program keeps on disk, and the one model of each format.

It owns `.autonomous/` (`paths`), crash-safe writes (`atomic`), the run state (`run_state`, the
model; `state`, its snapshot and journal; `spend_journal`, money per model call), the feature
logs (`feature_log`), the working-memory log (`working_memory`, `memory_entries`), the events
(`event_kinds`, the union the event log and the renderers share; `events`, the sink) and the
run lock (`lock`).

It imports `orchestrator.llm` (token usage, spend lines), `orchestrator.spec` (feature ids),
`orchestrator.safety` (redaction) and `context_agent.files` (the crash-safe, link-refusing file
reads and writes both packages use, and their errors); never `run`, `commands` or `tools`.
"""

"""orchestrator.store: everything the program keeps on disk, and the one model of each format.

It owns `.autonomous/` (`disk/`: `paths`, crash-safe writes in `atomic`, reads that refuse
links in `no_follow`, the run lock in `lock`), the run state (`run_state`, the
model; `state`, its snapshot and journal; `spend_journal`, money per model call), the feature
logs (`feature_log`), the working-memory log (`working_memory`, `memory_entries`), the events
(`event_kinds`, the union the event log and the renderers share; `events`, the sink).

Its place in the layer chain is docs/architecture.md's (`tests/unit/test_architecture.py`): it
imports `llm`, `spec`, `safety` and `shared_base`, never `run`, `commands`, `tools` or `context_agent`.
"""

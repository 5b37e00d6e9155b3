"""The run: what happens between `orchestrate run` and its exit code.

Top level, the run as a whole: `factory` builds the collaborators, `runner` (the `Runner`) works
through the queue in `feature_order`, keeps the `books` (state, journal, spend) and the
`feature_logs`, and `finishing` does what follows a pass. Three wings below it:
- `attempt/`: one feature, attempt by attempt (the job, the agent loop, the prompt, strategies);
- `checks/`: verification and integrity (a check run, the guard, footprints, final verification);
- `parallel/`: `--jobs N` (the worker scheduler, slots, shared books, background summary).
Git plumbing is in `orchestrator.git`, the merge queue in `orchestrator.merge`.

May import `orchestrator.{config,store,llm,spec,safety,tools,git,merge}` and `context_agent`;
never `orchestrator.commands` or `orchestrator.cli` (they import this package, not the reverse).
"""

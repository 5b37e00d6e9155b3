"""The run: what happens between `orchestrate run` and its exit code.

Owns the loop over features and everything one feature goes through:
- `coordinator`: the `Runner`, given its collaborators (`RunParts`): the queue, the
  summarize schedule, the exit verdict, stops on limits and interrupts;
- `factory`: builds the real collaborators (`build_runner`, `build_parts`);
- `feature_job`: one feature's attempts, verified and recorded, in a workspace it is given;
- `recorder`, `books`, `feature_logs`, `finishing`: what a feature's run writes down (events,
  working memory, state journal and spend, feature logs) and what follows a pass;
- `parallel` (`--jobs N`: the `ParallelRunner`, worker threads), `parallel_job` (a feature
  job whose pass is merged first), `merge_queue`, `worktrees`, `shared` (the state store the
  workers write through);
- `agent_loop` (one attempt's model/tool loop), `prompts` (one build of a feature's turn),
  `strategies` (the `--context` registry), `context_view` (every call to the Context Agent),
  `scheduler`, `verify`, `protect`, `check_influence`, `checkpoint`, `request_size`.

May import `orchestrator.{config,store,llm,spec,safety,tools}` and `context_agent`; never
`orchestrator.commands` or `orchestrator.cli` (they import this package, not the reverse).
"""

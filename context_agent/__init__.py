"""The Context Agent: compressed project memory injected into every feature's prompt under a
hard token budget (product spec, section 6).

    agent = ContextAgent(project_root, features=spec.features, model_call=call,   # project_memory
                         read_feature=read_feature, redact=redact)
    section = render_project_context(agent.get_injection("todo-api"))            # render

It owns its four stores and the pending reports in `.autonomous/context/` (`ContextFiles`
names every file; the orchestrator's `ProjectPaths` takes them from here), the atomic writes
to them (`files`), its token estimator, the summarizer's prompt, answer and default model,
and its typed results (`ContextInjection`, `SummaryResult`). It is given what it needs from
the run: the spec's features (`FeatureLike`), a model-call function, the feature records
(`read_feature` -> `FeatureRecord`), an event handler and a redaction function.

It imports nothing from `orchestrator`: the arrow goes orchestrator -> context_agent only.

The modules, by what happens to memory:
    project_memory     `ContextAgent`, the one handle; every method degrades, none raises
    memory/            the four stores and the pending reports: formats, updates, caps, union
    records/           what it is told of each feature: its record, the agent's report, a failure
    summarizer/        one summarization: the model call or the fallback, merged as a delta
    injection/         what goes into one feature's `## Project Context` under the budget
    files              the store directory's file names (`ContextFiles`) and crash-safe writes
    budget             every budget and cap
    tokens, text, words   token estimates, cutting text, claim words
    agent_events, interfaces, json_shapes   warnings out; what it needs in; untyped JSON names

Each name is imported from the module that defines it; this file only documents.
"""

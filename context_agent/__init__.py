"""The Context Agent: compressed project memory injected into every feature's prompt under a
hard token budget (product spec, section 6).

    agent = ContextAgent(project_root, features=spec.features, model_call=call,
                         read_feature=read_feature, redact=redact)
    section = render_project_context(agent.get_injection("todo-api"))

It owns its four stores and the pending reports in `.autonomous/context/` (`ContextFiles`
names every file; the orchestrator's `ProjectPaths` takes them from here), the atomic writes
to them (`files`), its token estimator, the summarizer's prompt, answer and default model,
and its typed results (`ContextInjection`, `SummaryResult`). It is given what it needs from
the run: the spec's features (`FeatureLike`), a model-call function, the feature records
(`read_feature` -> `FeatureRecord`), an event handler and a redaction function.

It imports nothing from `orchestrator`: the arrow goes orchestrator -> context_agent only.
"""

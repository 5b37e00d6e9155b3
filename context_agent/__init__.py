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
    stores, files      the four stores' formats, loading, saving; the file names (`ContextFiles`)
    store_updates      adding to and retiring from the stores: caps, eviction, renewing restatements
    store_union        another project's stores merged into these (`orchestrate combine`)
    pending            the agents' reports recorded since the last summarization
    report_reading     the agent's `report_feature` payload, read leniently
    feature_records    what the agent is told of each feature (`FeatureRecord`, `read_feature`)
    logs, failure_text what the summarizer reads of a feature; a failed check in one line
    summary_notes      the running summary's recent notes and the cap on its file
    summarization      one summarization: the call or the fallback, merged, `SummaryResult`
    summarizer_call    the summarizer's one model call: schema, request, answer (`SummarizerAnswer`)
    merge, fallback    the answer merged as a delta; the summary when the call fails
    injection_choice   what goes into one feature's `## Project Context` under the budget
    context_injection  `ContextInjection`, the chosen items, as `render` shows them
    relevance, budget  scoring items for the feature at hand; every budget and cap
    tokens, text, words, text_index   token estimates, cutting text, claim words, duplicate lookup
    agent_events, interfaces, json_shapes   warnings out; what it needs in; untyped JSON names

Each name is imported from the module that defines it; this file only documents.
"""

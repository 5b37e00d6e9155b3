"""Talking to the model: one safe call, its price, the default models, the message list.

Owns:
    client        `ModelClient.create`: limits checked first (cost and token caps), transient
                  faults retried, every call booked in `Spend` and journaled
    errors        what a call can end in besides an answer (LimitReached, ApiUnavailable,
                  ApiAuthError, ModelRequestRejected): the CLI maps each to an exit code
    sdk           the SDK client, built from the key or token in the environment
    client_settings  `ClientSettings`: what the client reads of a run's configuration (built
                  by `RunConfig.client_settings`; `llm` never imports `orchestrator.config`)
    pricing       `TokenUsage` (counts as saved everywhere) and `PriceTable` (USD per model)
    models        the default agent and summarizer model ids, read from the installed SDK
    conversation  cache breakpoints, observation masking and the kept request size of an attempt

May import: `orchestrator.safety` (redaction), `orchestrator.user_errors` (UsageError),
`context_agent.tokens` (the one token estimator), `context_agent.project_memory` (the
summarizer's default model id), the SDK and tenacity; never `orchestrator.store`, `tools`,
`run` or `commands`. The layer chain is written once, in docs/architecture.md. `anthropic` is
imported by `client` and `sdk` only: importing the SDK costs seconds, so `models` reads the
SDK's model list from its source.
"""

"""Talking to the model: one safe call, its price, the default models, the message list.

Owns:
    client        `ModelClient.create`: limits checked first (cost and token caps), transient
                  faults retried, every call booked in `Spend` and journaled; the exceptions a
                  run maps to exit codes (LimitReached, ApiUnavailable, ApiAuthError, ...)
    pricing       `TokenUsage` (counts as saved everywhere) and `PriceTable` (USD per model)
    models        the default agent and summarizer model ids, read from the installed SDK
    conversation  cache breakpoints, observation masking and the kept request size of an attempt

May import: `orchestrator.safety` (redaction), `orchestrator.config` (RunConfig, ConfigError),
`context_agent.tokens` (the one token estimator), the SDK and tenacity. Nothing above it: not
`orchestrator.store`, `tools`, `run`, `commands` (the arrows: commands -> run ->
(context_agent, tools) -> store -> llm/spec/safety). `anthropic` is imported by `client` only,
and `client` only when a command needs the API: importing the SDK costs seconds.
"""

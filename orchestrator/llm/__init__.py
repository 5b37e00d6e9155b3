"""Talking to the model: one safe call, its price, the default models, the message list.

Owns:
    client        `ModelClient.create`: limits checked first (cost and token caps), transient
                  faults retried, every call booked in the run's `RunSpend` and journaled
    errors        what a call can end in besides an answer (LimitReached, ApiUnavailable,
                  ApiAuthError, ModelRequestRejected): the CLI maps each to an exit code
    endpoint/     the provider (Anthropic, Bedrock, Vertex), its environment, and `sdk`: the SDK
                  client, built from the key or token in the environment
    client_settings  `ClientSettings`: what the client reads of a run's configuration (built
                  by `RunConfig.client_settings`; `llm` never imports `orchestrator.config`)
    costs/        `pricing`: `TokenUsage` (counts as saved everywhere) and `PriceTable` (USD per
                  model); `spend`, the run's money (`RunSpend`, the one counter every client
                  of a run books into, and its snapshot `RunTotals`, the state's `totals`);
                  `reservations` against the caps
    models        the default agent and summarizer model ids, read from the installed SDK
    conversation  cache breakpoints, observation masking and the kept request size of an attempt

May import: `orchestrator.safety` (redaction), `orchestrator.user_errors` (UsageError),
`shared_base` (the one token estimator, the default model ids), the SDK and tenacity; nothing
above it in docs/architecture.md's layer chain. `anthropic` is imported by `client` and `sdk`
only: importing the SDK costs seconds, so `models` reads the SDK's model list from its source.
"""

"""`orchestrate demo`'s model: a scripted coding agent on a local fake of the Messages API.

- `fake_api`: a fake of the Anthropic Messages API over real HTTP on 127.0.0.1 (validation,
  usage, prompt caching, faults, a scripted agent per feature); the tests use it too;
- `textkit_plan`, `summaries`, `scripted`: the demo model that builds `specs/textkit`, one
  deliberate failure and one regression included, with real summaries for the Context Agent;
- `spec/`: the textkit spec and its checks, shipped so that the demo runs from an installed package.

May import `context_agent` (its token estimator, so the fake's counts agree with the
orchestrator's) and the standard library; nothing else of `orchestrator` (the `demo`
command in `orchestrator.commands` imports this package, not the reverse).
"""

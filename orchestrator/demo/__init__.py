"""`orchestrate demo`'s model: a scripted coding agent on the fake of the Messages API.

- `textkit_plan`, `textkit_sources`, `scripted`: the demo model that builds `specs/textkit`, one
  deliberate failure and one regression included, with real summaries for the Context Agent,
  played by `fake_messages_api` (a package apart, beside `orchestrator/`: a fake of the Anthropic
  Messages API over real HTTP on 127.0.0.1, which the tests use too);
- `spec_bundle` and `textkit_spec.json`: the textkit spec and its checks, shipped so that the
  demo runs from an installed package.

The only part of `orchestrator` that imports `fake_messages_api`; itself imported only by the
`demo` command (`orchestrator.commands.demo`), never the reverse.
"""

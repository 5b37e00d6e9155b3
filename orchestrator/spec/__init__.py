"""The feature spec: its format, its loading and checking, and choosing features from it.

Owns:
    load          the one entry point: `load_spec(path)` / `parse_spec(bytes)` -> a checked spec,
                  or `SpecError` listing every problem with its location
    feature_spec  `FeatureSpec`, `Feature`, `SpecSettings`: what the rest of the program reads
    fields        the constrained field types and limits (ids, commands, globs, sizes)
    decode        defensive JSON decoding and unknown-key warnings
    spec_errors   `SpecError` and pydantic errors turned into located, plain messages
    graph         ids and dependencies: unique, known, acyclic
    quickstart    the Anthropic quickstart's `feature_list.json`, translated to native features
    selection     `--only` and `--shard I/N`: which features a run takes

May import: pydantic and the standard library only; nothing else of `orchestrator` (it is a
bottom layer: commands -> run -> (context_agent, tools) -> store -> llm/spec/safety).

    from orchestrator.spec.load import load_spec
    from orchestrator.spec.feature_spec import Feature

Each name is imported from the module that defines it; this file only documents.
"""

"""A local fake of the Anthropic Messages API for tests, benchmarks and `orchestrate demo`.

Serves ``POST /v1/messages`` and ``POST /v1/messages/count_tokens`` over real HTTP on
127.0.0.1, with the API's authentication, validation, error shapes, usage and prompt-caching
rules, a scripted coding agent per feature, a summarizer for structured-output requests, and
fault injection. See `FakeAPI`.

Not part of the product: it stands in for the API the product is checked against, so it imports
nothing of `orchestrator` or `context_agent` and bills with its own token count (`api_tokens`),
not the product's estimator. Only `orchestrator.demo` (and the tests and benchmarks) import it;
it ships in the same distribution so that `orchestrate demo` runs from an installed package.

    with FakeAPI() as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="test-key")
"""

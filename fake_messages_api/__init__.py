"""A local fake of the Anthropic Messages API for tests, benchmarks and `orchestrate demo`.

Serves ``POST /v1/messages`` and ``POST /v1/messages/count_tokens`` over real HTTP on
127.0.0.1, with the API's authentication, validation, error shapes, usage and prompt-caching
rules, a scripted coding agent per feature, a summarizer for structured-output requests, and
fault injection. See `FakeAPI`.

    with FakeAPI() as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="test-key")
"""

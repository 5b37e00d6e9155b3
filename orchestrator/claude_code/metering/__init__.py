"""The metering proxy: Claude Code's only way to the API, with the run's caps and books on it.

    metering_proxy   the proxy: each call checked against the caps, then booked
    proxy_server     its HTTP plumbing on 127.0.0.1
    request_policy   what it passes on: the calls Claude Code makes for the run, nothing else
    upstream         where it sends them, and the real credentials it adds
    provider_relay   on Bedrock or Vertex: sent by the run's own SDK client
    mended_refusals  the 400s Claude Code mends itself, told only when it did not
    sse_usage        what a streamed answer bills, read from its events as they pass
"""

"""The summarizer: every fifth feature and at the end, the features since the last time folded into the stores.

    summarization    one summarization: the call or the fallback, merged, `SummaryResult`
    summarizer_call  the one model call: schema, request, answer (`SummarizerAnswer`)
    merge            the answer merged into the stores as a delta
    fallback         the deterministic summary when the call fails
"""

"""The Context Agent's memory: the four stores and the pending reports in `.autonomous/context/`.

    stores         the stores' file formats, loading and saving
    store_updates  adding to and retiring from the stores: caps, eviction, renewing restatements
    store_union    another project's stores merged into these (`orchestrate combine`)
    summary_notes  the running summary's recent notes and the cap on its file
    pending        the agents' reports recorded since the last summarization
    text_index     the stored texts indexed, so a new item meets only its possible duplicates
"""

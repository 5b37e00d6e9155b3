"""One feature, attempt by attempt: the feature job, the agent loop, the recorder, the prompt, the context strategies."""

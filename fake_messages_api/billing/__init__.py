"""What a request costs and what was received: the API's token count, the prompt as billed, prompt caching, the ledger."""

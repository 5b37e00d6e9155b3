"""Which endpoint a call goes to: the provider (Anthropic, Bedrock, Vertex), its environment, the SDK client."""

"""orchestrator.llm."""

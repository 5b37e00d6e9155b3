"""orchestrator.store."""

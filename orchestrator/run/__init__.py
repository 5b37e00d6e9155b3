"""orchestrator.run."""

"""orchestrator.spec.load."""

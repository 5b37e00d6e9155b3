"""orchestrator.safety."""

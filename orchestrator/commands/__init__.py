"""orchestrator.commands."""

"""orchestrate: build software feature by feature with Claude."""

__version__ = "0.1.0"

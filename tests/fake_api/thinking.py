"""Re-export of `orchestrator.demo.fake_api.thinking` (the fake ships in the package)."""

from orchestrator.demo.fake_api.thinking import sign

__all__ = ["sign"]

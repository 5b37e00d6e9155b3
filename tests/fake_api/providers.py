"""Re-export of `orchestrator.demo.fake_api.cloud_providers` (the fake ships in the package)."""

from orchestrator.demo.fake_api.cloud_providers import TEST_AWS_ACCESS_KEY, TEST_AWS_SECRET_KEY, TEST_VERTEX_TOKEN

__all__ = ["TEST_AWS_ACCESS_KEY", "TEST_AWS_SECRET_KEY", "TEST_VERTEX_TOKEN"]

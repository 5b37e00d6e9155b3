"""Re-export of `orchestrator.demo.fake_api.agent` (the fake now ships in the package)."""

from orchestrator.demo.fake_api.agent import *  # noqa: F403

"""Re-export of `orchestrator.demo.fake_api.plans` (the fake now ships in the package)."""

from orchestrator.demo.fake_api.plans import *  # noqa: F403

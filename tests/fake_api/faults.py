"""Re-export of `orchestrator.demo.fake_api.faults` (the fake now ships in the package)."""

from orchestrator.demo.fake_api.faults import *  # noqa: F403

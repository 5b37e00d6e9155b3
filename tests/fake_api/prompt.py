"""Re-export of `orchestrator.demo.fake_api.prompt` (the fake now ships in the package)."""

from orchestrator.demo.fake_api.prompt import *  # noqa: F403

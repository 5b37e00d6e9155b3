"""Re-export of `orchestrator.demo.fake_api.agent_turn` (the fake now ships in the package)."""

from orchestrator.demo.fake_api.agent_turn import *  # noqa: F403

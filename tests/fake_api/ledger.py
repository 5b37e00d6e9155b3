"""Re-export of `orchestrator.demo.fake_api.ledger` (the fake now ships in the package)."""

from orchestrator.demo.fake_api.ledger import *  # noqa: F403

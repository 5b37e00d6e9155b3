"""Re-export of `orchestrator.demo.fake_api.summarizer` (the fake now ships in the package)."""

from orchestrator.demo.fake_api.summarizer import *  # noqa: F403

"""Re-export of `orchestrator.demo.fake_api.forced_tools` (the fake ships in the package)."""

from orchestrator.demo.fake_api.forced_tools import load_tool_answers

__all__ = ["load_tool_answers"]

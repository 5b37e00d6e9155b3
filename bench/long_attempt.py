"""One long agent attempt: how its time, and the text the token estimator reads, grow with its turns.

    python3 bench/long_attempt.py 50 200 400

runs one attempt of each length against a stub model that asks, every turn, for the editor's
`view` of the same 2.6 KB file, with masking off, so that each request carries the whole
conversation. It prints the seconds the attempt took and the characters estimated. Not part
of `bench/run.py`: it measures one fix (issue 13, item 20: the request's size was estimated
from scratch before every call, quadratic in the turns).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import shared_base.tokens as tokens  # noqa: E402
from orchestrator.config import RunConfig  # noqa: E402
from orchestrator.run.attempt.agent_loop import AgentSession, run_agent  # noqa: E402
from orchestrator.llm.client import ModelClient  # noqa: E402
from orchestrator.llm.costs.spend import Spend
from orchestrator.tools.context import ToolContext
from orchestrator.safety.environment import CommandEnvironment  # noqa: E402
from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX  # noqa: E402
from orchestrator.safety.credentials.secrets import scrubbed_environment  # noqa: E402
from tests.sdk_doubles import StreamsCreate  # noqa: E402

FILE_TEXT = "a line of the file the agent keeps reading\n" * 60


def _message(blocks: list[Any], stop: str) -> SimpleNamespace:
    usage = SimpleNamespace(input_tokens=300, output_tokens=40, cache_read_input_tokens=0, cache_creation_input_tokens=0)
    return SimpleNamespace(content=blocks, stop_reason=stop, usage=usage)


class ViewingModel(StreamsCreate):
    """Asks to view big.txt until its last turn, then ends."""

    def __init__(self, turns: int) -> None:
        self.turns, self.calls = turns, 0
        self.messages = self

    def create(self, **_request: Any) -> SimpleNamespace:
        self.calls += 1
        if self.calls >= self.turns:
            return _message([SimpleNamespace(type="text", text="done")], "end_turn")
        view = {"command": "view", "path": "big.txt"}
        return _message([SimpleNamespace(type="tool_use", id=f"toolu_{self.calls}",
                                         name="str_replace_based_edit_tool", input=view)], "tool_use")


def measure(turns: int) -> tuple[float, int]:
    """Seconds one attempt of `turns` turns takes, and the characters it estimated."""
    root = Path(tempfile.mkdtemp())
    (root / "big.txt").write_text(FILE_TEXT)
    estimated = 0
    real_pieces = tokens._pieces

    def counting_pieces(text: str) -> int:
        nonlocal estimated
        estimated += len(text)
        return real_pieces(text)

    tokens._pieces = counting_pieces
    tokens._cached_pieces.cache_clear()
    session = AgentSession(
        client=ModelClient(RunConfig(max_cost=100.0).client_settings(), ViewingModel(turns), Spend()), model="claude-sonnet-5-5",
        system="You build software.", tool_context=ToolContext(environment=CommandEnvironment(root, NO_SANDBOX, scrubbed_environment())), max_turns=turns,
        max_output_tokens=1024, mask_after_tokens=1_000_000,
    )
    try:
        started = time.perf_counter()
        run_agent(session, [], "## Feature\nID: f\nRead big.txt.", "f")
        return time.perf_counter() - started, estimated
    finally:
        tokens._pieces = real_pieces


if __name__ == "__main__":
    for count in map(int, sys.argv[1:] or ["50", "200"]):
        seconds, characters = measure(count)
        print(f"{count} turns: {seconds:.2f} s, {characters / 1e6:.1f} M characters estimated")

"""The demo model: the fake Messages API playing `textkit_plan`, with a summarizer that summarizes.

It is served on 127.0.0.1 and reached with a dummy key that never leaves the machine; its
model ids say `demo` so that no output line naming the model can be mistaken for Claude's.
Costs are priced as Sonnet 4.5 and Haiku 4.5 (`DEMO_PRICES`): what the run would have cost.
"""

from __future__ import annotations

import json
import re
import signal
import threading

from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import Block
from fake_messages_api.scripted_agent.summarizer import default_summarizer
from fake_messages_api.server import FakeAPI
from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.pricing import MODEL_PRICES

from .textkit_plan import CHECK_FILES, textkit_plan

# The demo's model server, as the demo command sees it: only `orchestrator.demo` imports the fake.
DemoModel = FakeAPI

DEMO_MODEL = "demo-scripted-sonnet"
DEMO_SUMMARIZER_MODEL = "demo-scripted-haiku"
# Priced explicitly: an id the price table does not know is booked at the dearest known price.
DEMO_PRICES = {DEMO_MODEL: MODEL_PRICES["claude-sonnet-4-5"], DEMO_SUMMARIZER_MODEL: MODEL_PRICES["claude-haiku-4-5"]}
DEMO_API_KEY = "demo-key-offline-not-a-secret"
_CHECK_STEP = 1  # the agent's second reply runs the feature's check (`textkit_plan`)
_PRESS_AFTER_S = 0.2

_PROJECT_LINE = (
    "textkit: a standard-library-only text library, flat layout (textkit/ at the root, "
    "pyproject.toml with setuptools, no dependencies); each feature adds one module and "
    "re-exports it from textkit/__init__.py."
)
_LESSONS = {
    "slugify": "slugify's first attempt kept accents; NFKD + ASCII encoding fixed it.",
    "truncate": "Never add runtime dependencies: package-skeleton's check wants none.",
}


def demo_model() -> FakeAPI:
    """A fake Messages API (not started) that builds textkit and answers summaries."""
    return FakeAPI(
        default_plan=textkit_plan,
        summarizer=demo_summarizer,
        known_models={DEMO_MODEL, DEMO_SUMMARIZER_MODEL},
        rejected_keys=(),
    )


def demo_summarizer(request: JsonObject) -> JsonObject | str:
    """A real, non-empty running summary: the project, what is done, what went wrong."""
    answer = default_summarizer(request)
    if not isinstance(answer, dict):
        return answer
    prompt = json.dumps(request.get("messages", []))
    done = [fid for fid in CHECK_FILES if re.search(rf"\b{re.escape(fid)}\b", prompt)]
    lines = [_PROJECT_LINE]
    if done:
        lines.append("Done so far: " + ", ".join(done) + ".")
    lines += [lesson for fid, lesson in _LESSONS.items() if fid in done]
    answer["summary"] = "\n".join(lines)
    return answer


def press_ctrl_c_during(fake: FakeAPI, feature_id: str) -> threading.Event:
    """Make `fake` send this process SIGINT while `feature_id`'s agent runs its check; the event is set then."""
    pressed = threading.Event()
    lock = threading.Lock()
    timer: list[threading.Timer] = []

    def press() -> None:
        with lock:
            if not pressed.is_set():
                pressed.set()
                signal.raise_signal(signal.SIGINT)  # handled in the main thread, as a real Ctrl-C is

    def interrupting(turn: AgentTurn) -> list[Block]:
        if turn.feature_id == feature_id and not timer and turn.step == _CHECK_STEP:
            # Shortly after this answer, while the agent's command (the check) runs: a Ctrl-C
            # between calls, so the run stops with every call answered and booked.
            timer.append(threading.Timer(_PRESS_AFTER_S, press))
            timer[0].daemon = True
            timer[0].start()
        elif turn.feature_id == feature_id and timer and not pressed.is_set():
            press()  # a machine so slow that the check ended first: during this call, then
        return textkit_plan(turn)

    fake.default_plan = interrupting
    return pressed

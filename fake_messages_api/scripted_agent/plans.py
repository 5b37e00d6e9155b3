"""Scripted agent plans: what the fake "model" answers at each step of a feature.

A plan is either a callable ``(AgentTurn) -> list[block]`` deciding each reply itself, or a
sequence indexed by step whose entries are such callables or static block lists. Past the
end of a sequence the agent ends its turn with ``Feature <id> is done.``. Blocks are content
blocks as the API returns them; the builders below make the usual ones.

Static blocks are templates: each time one is sent, its ``tool_use`` gets a fresh id, as a
real model's would. Blocks returned by a callable are sent as they are (ids filled in only
where missing).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fake_messages_api.api_errors import new_id
from fake_messages_api.scripted_agent.agent_turn import AgentTurn

Block = dict[str, Any]
StepFn = Callable[[AgentTurn], list[Block]]
Step = StepFn | Sequence[Block]
Plan = StepFn | Sequence[Step]

EDITOR_TOOL = "str_replace_based_edit_tool"
BASH_TOOL = "bash"
REPORT_TOOL = "report_feature"


def text(s: str) -> Block:
    """A text block."""
    return {"type": "text", "text": s}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> Block:
    """A ``tool_use`` block calling `name` with `input` (a fresh ``toolu_`` id by default)."""
    return {"type": "tool_use", "id": id or new_id("toolu"), "name": name, "input": dict(input)}


def edit_create(path: str, content: str) -> Block:
    """The text editor tool creating `path` with `content`."""
    return tool_use(EDITOR_TOOL, {"command": "create", "path": path, "file_text": content})


def edit_str_replace(path: str, old_str: str, new_str: str) -> Block:
    """The text editor tool replacing `old_str` by `new_str` in `path`."""
    return tool_use(
        EDITOR_TOOL, {"command": "str_replace", "path": path, "old_str": old_str, "new_str": new_str}
    )


def edit_view(path: str) -> Block:
    """The text editor tool viewing `path`."""
    return tool_use(EDITOR_TOOL, {"command": "view", "path": path})


def bash(command: str) -> Block:
    """The bash tool running `command`."""
    return tool_use(BASH_TOOL, {"command": command})


def report(
    summary: str,
    decisions: Sequence[str] = (),
    constraints: Sequence[str] = (),
    notes: str = "",
    prevention: str = "",
) -> Block:
    """The custom ``report_feature`` tool with the agent's account of the feature
    (`prevention`, after a failed attempt, only when given)."""
    return tool_use(
        REPORT_TOOL,
        {
            "summary": summary,
            "decisions": list(decisions),
            "constraints": list(constraints),
            "notes": notes,
            **({"prevention": prevention} if prevention else {}),
        },
    )


def stop_reason(reason: str) -> Block:
    """Not a block: makes the reply end with `reason` (``pause_turn``, ``refusal``,
    ``model_context_window_exceeded``, ``max_tokens``...) instead of the one its blocks imply."""
    return {"type": "fake_stop_reason", "stop_reason": reason}


def cut_tool_use(name: str, input: dict[str, Any], keep_chars: int) -> Block:
    """A tool call cut off by max_tokens after `keep_chars` characters of its input JSON; the
    reply ends with ``stop_reason: max_tokens``."""
    return {**tool_use(name, input), "_cut_at": keep_chars}


def done_text(feature_id: str) -> Block:
    """The agent's closing words once its plan has run out of steps."""
    return text(f"Feature {feature_id} is done.")


def default_plan(turn: AgentTurn) -> list[Block]:
    """The plan every feature without its own follows: create a file, check it, report, end.

    Step 0 creates ``features/<id>.txt`` containing ``done``; step 1 cats it; step 2 reports
    through ``report_feature``; from step 3 on the agent ends its turn.
    """
    fid = turn.feature_id
    path = f"features/{fid}.txt"
    if turn.step == 0:
        return [text(f"I will implement {fid}."), edit_create(path, "done\n")]
    if turn.step == 1:
        return [bash(f"cat {path}")]
    if turn.step == 2:
        return [
            report(
                f"Implemented {fid}",
                decisions=[f"{fid}: chose approach A"],
                constraints=[f"{fid}: keep the public API stable"],
            )
        ]
    return [done_text(fid)]


def _fresh_ids(blocks: Sequence[Block]) -> list[Block]:
    fresh = copy.deepcopy(list(blocks))
    for block in fresh:
        if block.get("type") == "tool_use":
            block["id"] = new_id("toolu")
    return fresh


def _fill_ids(blocks: Sequence[Block]) -> list[Block]:
    filled = list(blocks)
    for block in filled:
        if block.get("type") == "tool_use" and not block.get("id"):
            block["id"] = new_id("toolu")
    return filled


def play(plan: Plan, turn: AgentTurn) -> list[Block]:
    """The content blocks `plan` answers at `turn`."""
    if callable(plan):
        return _fill_ids(plan(turn))
    if turn.step >= len(plan):
        return [done_text(turn.feature_id)]
    step = plan[turn.step]
    if callable(step):
        return _fill_ids(step(turn))
    return _fresh_ids(step)


class TemplatePlan:
    """A declarative plan whose strings may say ``{feature_id}``; used for JSON plan files."""

    def __init__(self, steps: Sequence[Sequence[Block]]) -> None:
        self.steps = [list(step) for step in steps]

    def __call__(self, turn: AgentTurn) -> list[Block]:
        if turn.step >= len(self.steps):
            return [done_text(turn.feature_id)]
        return _fresh_ids(_substitute(self.steps[turn.step], turn.feature_id))


def _substitute(value: Any, feature_id: str) -> Any:
    # str.replace, not str.format: file contents in plans are full of braces.
    if isinstance(value, str):
        return value.replace("{feature_id}", feature_id)
    if isinstance(value, list):
        return [_substitute(v, feature_id) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, feature_id) for k, v in value.items()}
    return value


def load_plans(source: str | Path | Mapping[str, Any]) -> tuple[dict[str, Plan], Plan | None]:
    """Plans from a JSON file (or its parsed content): ``{feature_id: [[block, ...], ...]}``.

    Each feature id maps to its steps, each step a list of content blocks; ``tool_use``
    blocks may leave out ``id``. The key ``"*"`` gives the default plan for every other
    feature. In every string, ``{feature_id}`` is replaced by the feature's id. Returns the
    per-feature plans and the default plan (None when the file has no ``"*"``).
    """
    data = source if isinstance(source, Mapping) else json.loads(Path(source).read_text("utf-8"))
    if not isinstance(data, Mapping):
        raise ValueError("a plan file holds a JSON object: {feature_id: [[block, ...], ...]}")
    plans: dict[str, Plan] = {}
    default: Plan | None = None
    for feature_id, steps in data.items():
        if not isinstance(steps, list) or not all(isinstance(s, list) for s in steps):
            raise ValueError(f"plan {feature_id!r}: expected a list of steps, each a list of blocks")
        for step in steps:
            for block in step:
                if not isinstance(block, dict) or "type" not in block:
                    raise ValueError(f"plan {feature_id!r}: every block needs a 'type': {block!r}")
        plan = TemplatePlan(steps)
        if feature_id == "*":
            default = plan
        else:
            plans[feature_id] = plan
    return plans, default

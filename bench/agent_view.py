"""Issue 42: what the agent's view costs and saves, per feature: prompt tokens and model calls.

One scripted project of eight features, run in a git repository with real checks
(`tests/features/check_N.py`). The scripted agent acts on what its prompt shows it, as the
capable model of issue 42 did:
- no map of the project's files in the prompt: it first lists them (one call);
- a retry that does not say what the previous attempt left in the tree: it first runs
  `git status` and `git diff` (one call);
- a check it finds wrong (feature 8's asserts a sum of 7 for [1, 2, 3]): when the report tool
  has a field for a defective check it uses it, else it says so in its notes, and every
  attempt is spent.
Features 3 and 6 fail their first attempt (an off-by-one) and pass on the retry.

Run it with `python3 -m bench.agent_view`; figures in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import new_project, run_spec, scratch_dir
from bench.summarizers import diligent_summarizer
from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import bash, edit_create, edit_str_replace, report, text, tool_use
from fake_messages_api.server import FakeAPI

FEATURES = 8
BUGGY = (3, 6)  # first attempt off by one
WRONG_CHECK = 8  # its check asserts a wrong sum
WORKSPACE_MARK = "## Workspace"  # the file map, when the prompt has one
DIFF_MARK = "since the last checkpoint"  # the retry's account of the tree

_MODULE = '''"""Part {n}."""


def build_{n}(values: list[int]) -> dict[str, int]:
    """Totals for part {n}."""
    return {{"count": len(values), "sum": sum(values){bug}, "max": max(values, default=0)}}
'''
_CHECK = '''import sys
sys.path.insert(0, "src")
from part_{n} import build_{n}

result = build_{n}([1, 2, 3])
assert result == {{"count": 3, "sum": {total}, "max": 3}}, result
print("ok")
'''


def spec_document() -> dict[str, Any]:
    features = []
    for n in range(1, FEATURES + 1):
        feature: dict[str, Any] = {
            "id": f"part-{n}", "name": f"Part {n}", "category": "backend",
            "description": f"Module src/part_{n}.py with build_{n}(values): count, sum and largest value.",
            "acceptance": [f"build_{n}([1, 2, 3]) == {{'count': 3, 'sum': 6, 'max': 3}}"],
            "verify": f"python3 tests/features/check_{n}.py",
        }
        if n > 1:
            feature["depends_on"] = ["part-1"]
        features.append(feature)
    return {"project": "agent-view", "description": "Totals modules, one a feature.", "features": features}


def _has_defect_field(turn: AgentTurn) -> bool:
    for tool in turn.request.get("tools") or []:
        if tool.get("name") == "report_feature":
            return "defective_check" in json.dumps(tool.get("input_schema", {}))
    return False


def _actions(turn: AgentTurn) -> list[list[dict[str, Any]]]:
    """The attempt's replies, decided from what the first request shows."""
    n = int(turn.feature_id.rsplit("-", 1)[1])
    path = f"src/part_{n}.py"
    actions: list[list[dict[str, Any]]] = []
    if turn.is_retry and DIFF_MARK not in turn.request_text:
        actions.append([text("What is in the tree?"), bash("git status --short && git diff --stat")])
    if not turn.is_retry and WORKSPACE_MARK not in turn.request_text:
        actions.append([text("Let me look around."), bash("ls -R src tests 2>/dev/null")])
    if turn.is_retry and n in BUGGY:
        actions.append([edit_str_replace(path, "sum(values) + 1", "sum(values)")])
    elif not turn.is_retry:
        actions.append([edit_create(path, _MODULE.format(n=n, bug=" + 1" if n in BUGGY else ""))])
    actions.append([bash(f"python3 tests/features/check_{n}.py")])
    if n == WRONG_CHECK and _has_defect_field(turn):
        defect = {"file": f"tests/features/check_{n}.py", "line": 6,
                  "evidence": "asserts sum 7 for [1, 2, 3], whose sum is 6 (the acceptance says 6)"}
        actions.append([tool_use("report_feature", {"summary": f"build_{n} done; its check is wrong.",
                                                    "defective_check": defect})])
    elif n == WRONG_CHECK:
        actions.append([report(f"build_{n} done.", notes="THE CHECK IS WRONG: it expects sum 7 for [1, 2, 3].")])
    else:
        actions.append([report(f"build_{n} in {path}: count, sum, max.", decisions=[f"part {n} returns a dict"])])
    return actions


def plan(turn: AgentTurn) -> list[dict[str, Any]]:
    actions = _actions(turn)
    return actions[turn.step] if turn.step < len(actions) else [text("Done.")]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-", dir=scratch_dir()) as tmp:
        root, spec_path = new_project(Path(tmp), spec_document())
        for n in range(1, FEATURES + 1):
            check = root / "tests" / "features" / f"check_{n}.py"
            check.parent.mkdir(parents=True, exist_ok=True)
            check.write_text(_CHECK.format(n=n, total=7 if n == WRONG_CHECK else 6))
        _git(root, "init", "-q", "-b", "main")
        _git(root, "-c", "user.name=b", "-c", "user.email=b@x", "add", "-A")
        _git(root, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "checks")
        with FakeAPI(default_plan=plan, summarizer=diligent_summarizer, keep_requests=1) as fake:
            measured = run_spec(root, spec_path, fake.base_url, commit=True)
            if fake.errors:
                raise RuntimeError(f"the plan raised: {fake.errors[:3]!r}")
            agent = fake.usage.agent
        state = json.loads((root / ".autonomous" / "state" / "execution-state.json").read_text())
    statuses = {fid: entry.get("status") for fid, entry in state.get("features", {}).items()}
    return {
        "features": FEATURES, "exit_code": measured.exit_code, "agent_calls": agent.calls,
        "prompt_tokens": agent.prompt_tokens, "calls_per_feature": agent.calls / FEATURES,
        "prompt_tokens_per_feature": agent.prompt_tokens / FEATURES,
        "prompt_tokens_per_call": agent.prompt_tokens / max(agent.calls, 1), "statuses": statuses,
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=1))

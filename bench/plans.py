"""The scripted agent the benchmark's features follow, and the specs they run.

Two plans, both answering instantly:
- `short_plan`: two model calls per feature (write a file, report). Used to time the loop,
  where the fewer the calls, the larger the orchestrator's own share.
- `multi_turn_plan`: five calls per feature (write, read back, edit, run a command, report),
  with tool outputs of a realistic size. Used for token counts and cache reads.

Reports carry a summary and one decision per feature; constraints, which are project-wide
rules rather than per-feature notes, come from the first ten features only (`PROJECT_RULES`).

The spec's description is a paragraph, as a real spec's is (specs/textkit has one of about
the same length). It goes into the system prompt, so its length decides whether tools and
system together reach the model's 1024-token caching minimum: see docs/benchmarks.md.
"""

from __future__ import annotations

from typing import Any

from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import bash, edit_create, edit_str_replace, report, text

PROJECT_RULES = (
    "Python 3.11 standard library only; no new dependencies",
    "Every module logs through logging.getLogger(__name__), never print",
    "Public functions carry type hints and a one-line docstring",
    "Totals are plain dicts of str to int, never custom classes",
    "Files live under src/, one module per part",
    "No network access at import time",
    "Timestamps are UTC epoch milliseconds",
    "Errors raise ValueError with a message naming the bad field",
    "Keep every check runnable offline in under a second",
    "Names of parts are lower-case with hyphens",
)
DESCRIPTION = (
    "A small metrics service in pure Python (3.11+, standard library only), built from an empty "
    "directory. Each part is a module under `src/` with a dataclass describing the part and a "
    "function computing its totals (count, sum and largest value) from a list of integers; parts "
    "are grouped in modules of ten, and every part of a module builds on the module's first part. "
    "Each feature's check runs from the project root with the feature's verify command; run that "
    "command yourself to see what fails. The acceptance criteria are the exact contract the checks "
    "test. Keep modules small, typed and documented, and never edit the checks."
)
CATEGORIES = ("backend", "frontend", "storage", "api", "cli")
GROUP = 10  # features per module; each depends on its module's first feature

_MODULE = '''"""Part {n} of the service."""

from dataclasses import dataclass


@dataclass
class Part{n}:
    name: str = "{fid}"
    enabled: bool = True

    def describe(self) -> str:
        return f"{{self.name}} ({{'on' if self.enabled else 'off'}})"


def build_{n}(values: list[int]) -> dict[str, int]:
    """Totals for part {n}: count, sum and largest value."""
    return {{"count": len(values), "sum": sum(values), "max": max(values, default=0)}}
'''


def feature_number(feature_id: str) -> int:
    return int(feature_id.rsplit("-", 1)[-1])


def spec_document(count: int, description: str = DESCRIPTION) -> dict[str, Any]:
    """A native spec of `count` features (see `spec_features`)."""
    return {"project": "bench", "description": description, "features": spec_features(count)}


def spec_features(count: int, verify: str = "true") -> list[dict[str, Any]]:
    """`count` features in modules of `GROUP`: categories rotate by module, and each feature
    depends on its module's first one (a shallow graph, as real specs mostly have)."""
    features = []
    for index in range(1, count + 1):
        module = (index - 1) // GROUP
        first = module * GROUP + 1
        feature: dict[str, Any] = {
            "id": f"feat-{index:05d}",
            "name": f"Part {index} of module {module + 1}",
            "category": CATEGORIES[module % len(CATEGORIES)],
            "description": f"Build part {index} of module {module + 1}: its data type and its totals function.",
            "acceptance": [f"src/part_{index}.py defines Part{index} and build_{index}"],
            "verify": verify,
        }
        if index != first:
            feature["depends_on"] = [f"feat-{first:05d}"]
        features.append(feature)
    return features


def _report(fid: str) -> dict[str, Any]:
    n = feature_number(fid)
    constraints = [PROJECT_RULES[n - 1]] if n <= len(PROJECT_RULES) else []
    return report(
        f"Implemented {fid}: Part{n} and build_{n} in src/part_{n}.py, checked with the feature's command.",
        decisions=[f"Part{n} keeps its totals in a plain dict so later parts can merge them"],
        constraints=constraints,
    )


def short_plan(turn: AgentTurn) -> list[dict[str, Any]]:
    fid, n = turn.feature_id, feature_number(turn.feature_id)
    if turn.step == 0:
        return [text(f"Writing part {n}."), edit_create(f"src/part_{n}.py", _MODULE.format(n=n, fid=fid))]
    if turn.step == 1:
        return [_report(fid)]
    return [text(f"Feature {fid} is done.")]


def multi_turn_plan(turn: AgentTurn) -> list[dict[str, Any]]:
    fid, n = turn.feature_id, feature_number(turn.feature_id)
    path = f"src/part_{n}.py"
    if turn.step == 0:
        return [text(f"I will write part {n} first, then check it."), edit_create(path, _MODULE.format(n=n, fid=fid))]
    if turn.step == 1:
        return [text("Let me read it back."), bash(f"cat {path}")]
    if turn.step == 2:
        return [
            text("The default name should say which part it is."),
            edit_str_replace(path, f'name: str = "{fid}"', f'name: str = "part-{n}"'),
        ]
    if turn.step == 3:
        return [text("Now the check."), bash(f"grep -c def {path} && wc -l {path}")]
    if turn.step == 4:
        return [_report(fid)]
    return [text(f"Feature {fid} is done.")]

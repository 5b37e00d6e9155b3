"""Every text `orchestrate plan` sends: one function per prompt, so each is found in one place."""

from __future__ import annotations

import json
from collections.abc import Sequence

from orchestrator.json_types import JsonObject
from orchestrator.plan.schema import CHECKS_TOOL, SPEC_TOOL
from orchestrator.spec.feature_spec import Feature

PLANNER_SYSTEM = f"""You plan software projects for an autonomous coding agent that builds them feature by feature.
Turn the product description you are given into features, and submit them by calling {SPEC_TOOL}.

Rules for the features:
- Each is one small, verifiable step an agent can build in one session, in the order to build them.
- id: short, unique, lowercase words joined by "-" (letters, digits, ".", "_", "-" only).
- depends_on: ids of earlier features it needs; never a later feature, never itself.
- acceptance: concrete, testable statements (inputs and expected outputs), not wishes.
- verify: the shell command that checks exactly this feature, run in the project directory, exit 0
  meaning it works; for pytest projects `python -m pytest -q tests/features/test_<id>.py`
  (<id> with "-" and "." replaced by "_"), a file that will be written to test this feature only.
- Do not plan features for what the project already has (see the file map).
"""

CHECK_SYSTEM = f"""You write the checks of a test-first plan: for one feature, the test files that prove it works.
Submit them by calling {CHECKS_TOOL}.

Rules:
- Write only test files (never the feature's code): the feature is not built yet, and the test
  must fail now and pass once it is built. A test that passes before the feature exists is worthless.
- Test behaviour through the public interface the feature description and acceptance criteria name;
  import the feature's modules as the description names them.
- Use only what exists now or what the feature itself is asked to build; no fixtures or helper
  modules that nobody will write. Keep each check self-contained.
- verify runs exactly these files, from the project directory.
- Before you submit, re-derive every expected value in your assertions by hand from the description
  and acceptance criteria (count the items, do the arithmetic, spell out the exact string). A wrong
  expected value still fails before the feature exists, so nothing catches it but you; it then fails
  correct code, and the agent can only report the check as defective.
"""


def file_map_section(file_map: str) -> str:
    """The existing project, or a line saying it is empty."""
    if not file_map:
        return "## Existing project\n\nThe project directory is empty: everything is to be built.\n"
    return f"## Existing project (file map)\n\n{file_map}\n"


def planner_prompt(
    chunk: str, *, part: int, parts: int, planned: Sequence[JsonObject], file_map: str,
    max_features: int | None, runner: str | None,
) -> str:
    """The user message asking for the features of one chunk of the description."""
    lines = []
    if parts > 1:
        lines.append(f"This is part {part} of {parts} of a long description; plan the features of this part only.\n")
    lines.append(f"## Product description\n\n{chunk.strip()}\n")
    lines.append(file_map_section(file_map))
    if planned:
        listed = "\n".join(f"- {f.get('id')}: {f.get('name')}" for f in planned)
        lines.append(f"## Features already planned (do not repeat them; you may depend on them)\n\n{listed}\n")
    if runner:
        lines.append(f"## Test runner\n\nChecks run with {runner}.\n")
    if max_features:
        lines.append(f"Plan at most {max_features} features for this part.\n")
    lines.append(f"Call {SPEC_TOOL} with the project name, a one-paragraph description, and the features.")
    return "\n".join(lines)


def repair_prompt(problems: Sequence[str]) -> str:
    """The tool error telling the planner what was wrong with its answer."""
    listed = "\n".join(f"- {p}" for p in problems)
    return (
        "That spec is not valid; nothing was written. The problems, with their locations:\n"
        f"{listed}\n\nCall {SPEC_TOOL} again with the whole corrected answer for this part."
    )


def check_prompt(feature: Feature, *, project: str, description: str, file_map: str, runner: str,
                 suggested_path: str, suggested_verify: str | None) -> str:
    """The user message asking for one feature's check."""
    acceptance = "\n".join(f"- {a}" for a in feature.acceptance) or "- (none given)"
    return "\n".join([
        f"## Project\n\n{project}: {description.strip() or '(no description)'}\n",
        file_map_section(file_map),
        "## Feature",
        f"ID: {feature.id}",
        f"Name: {feature.name}",
        f"Description: {feature.description}",
        f"Acceptance criteria:\n{acceptance}",
        f"Depends on: {', '.join(feature.depends_on) or 'nothing'}\n",
        f"## Check to write\n\nRunner: {runner}. Suggested file: {suggested_path}."
        + (f" Suggested verify command: `{suggested_verify}`." if suggested_verify else ""),
        f"Call {CHECKS_TOOL} with the files and the verify command.",
    ])


def rewrite_prompt(verdict: str, reason: str, command: str, output: str) -> str:
    """The tool error telling the check writer why its check is not usable yet."""
    body = json.dumps({"command": command, "verdict": verdict, "reason": reason, "output": output[-2500:]}, indent=2)
    if verdict == "vacuous":
        ask = ("The check PASSES on the current tree, before the feature is built: it tests nothing the feature "
               "adds. Rewrite it so that it fails now and passes only once the feature works.")
    else:
        ask = ("The check fails for the wrong reason (a broken test, not a missing feature). Fix it so that it "
               "fails only because the feature is not built yet.")
    return f"{ask}\n\n```json\n{body}\n```\n\nCall {CHECKS_TOOL} again with the whole corrected check."


def invalid_check_prompt(problems: Sequence[str]) -> str:
    """The tool error for a check answer that could not be written at all."""
    listed = "\n".join(f"- {p}" for p in problems)
    return f"That check cannot be written; nothing was written:\n{listed}\n\nCall {CHECKS_TOOL} again."

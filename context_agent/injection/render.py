"""The `## Project Context` prompt section (product spec, section 6). The one place that
knows its wording."""

from __future__ import annotations

from context_agent.injection.context_injection import ContextInjection
from context_agent.text import one_line

HEADING = "## Project Context"


def render_project_context(injection: ContextInjection) -> str:
    """The section for an injection from `get_injection`; "" when its `token_count` is 0.

    Blocks are separated by one blank line and each is left out when empty; there is no
    trailing newline. When constraints had to be left out for budget, one extra line under
    Active Constraints says how many.
    """
    if not injection.token_count:
        return ""
    return render_sections(injection)


def render_sections(injection: ContextInjection) -> str:
    """The section text regardless of `token_count` (used while the injection is measured)."""
    blocks = [HEADING]
    summary = injection.summary.strip()
    if summary:
        blocks.append(f"**Summary:**\n{summary}")
    decisions = [decision_line(item.text, item.feature_id) for item in injection.decisions]
    if decisions:
        blocks.append("**Key Decisions:**\n" + "\n".join(decisions))
    failures = [failure_line(item.description, item.prevention) for item in injection.failures]
    if failures:
        blocks.append("**Recent Failures to Avoid:**\n" + "\n".join(failures))
    constraints = [constraint_line(item.description) for item in injection.constraints]
    if injection.omitted_constraints > 0:
        constraints.append(omitted_constraints_line(injection.omitted_constraints))
    if constraints:
        blocks.append("**Active Constraints:**\n" + "\n".join(constraints))
    if len(blocks) == 1:
        return ""
    return "\n\n".join(blocks)


def decision_line(text: str, feature_id: str) -> str:
    """One line under Key Decisions."""
    return f"- {one_line(text)} (Feature {feature_id})"


def failure_line(description: str, prevention: str) -> str:
    """One line under Recent Failures to Avoid."""
    return f"- {one_line(description)}: {one_line(prevention)}"


def constraint_line(description: str) -> str:
    """One line under Active Constraints."""
    return f"- {one_line(description)}"


def omitted_constraints_line(count: int) -> str:
    """The line that says how many active constraints did not fit."""
    noun = "constraint" if count == 1 else "constraints"
    return f"- ({count} more active {noun} not shown: less relevant to this feature)"

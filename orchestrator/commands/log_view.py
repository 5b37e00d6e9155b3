"""`orchestrate logs ID`: one feature's log for a human to read (`--json` prints the file itself).

The feature and its outcome, its footprint, then each attempt: its model, turns, tokens and
cost, its tool calls one a line, its check with the output as text (not one escaped JSON
string), the regression guard's re-runs; then the agent's report. Every value comes from the
file, so each line is made safe for the terminal (`printable`).
"""

from __future__ import annotations

from orchestrator.commands.rendering.output import excerpt_lines, printable
from orchestrator.store.agent_words import for_the_user
from orchestrator.store.check_excerpt import check_verdict
from orchestrator.store.feature_log import FeatureLog
from orchestrator.store.records import AttemptRecord
from shared_base.check_result import CheckResult

_INDENT = "    "


def log_text(log: FeatureLog) -> str:
    """The log as lines of text, ending with a newline."""
    lines = [f"{log.id}: {log.name}" + (f" ({log.category})" if log.category else ""), _outcome(log)]
    if log.reason:
        lines.append(f"reason: {log.reason}")
    if log.failed_branch:
        lines.append(f"its work is on branch {log.failed_branch}")
    if log.footprint is not None:
        lines.append(f"footprint: changed {', '.join(log.footprint.changed) or '(nothing)'}; "
                     f"check reads {', '.join(log.footprint.check) or '(nothing)'}")
    for attempt in log.attempt_history:
        lines += _attempt(attempt, log.model)
    last = log.attempt_history[-1].verification if log.attempt_history else None
    if log.verification is not None and log.verification != last:
        # Run again after the attempts (final verification, `verify`, `combine`): why it failed there.
        lines += ["last check:" if not log.attempt_history else "last check, run again later:",
                  *_check(log.verification, _INDENT)]
    summary = log.summary()
    if summary:
        lines.append(f"report: {summary}")
    return "\n".join(printable(line) for line in lines) + "\n"


def _outcome(log: FeatureLog) -> str:
    tokens = log.tokens
    return (f"{log.status} after {log.attempts} attempt(s), {log.duration_ms / 1000:.1f} s, "
            f"{tokens.total:,} tokens (input {tokens.input:,}, output {tokens.output:,}, cache read "
            f"{tokens.cache_read:,}, cache write {tokens.cache_write:,}), ${log.cost_usd:.4f}")


def _attempt(attempt: AttemptRecord, run_model: str) -> list[str]:
    if attempt.stop == "interrupted":
        return [f"attempt {attempt.attempt}: interrupted (run again)"]
    spent = ""
    if attempt.tokens is not None:
        spent = f", {attempt.tokens.total:,} tokens, ${attempt.cost_usd or 0:.4f}"
    lines = [f"attempt {attempt.attempt}: {attempt.model or run_model}, {attempt.turns} turn(s){spent}, "
             f"{attempt.tool_calls} tool call(s), stopped: {attempt.stop or '?'}"]
    if attempt.error:
        lines.append(f"{_INDENT}error: {for_the_user(attempt.error)}")
    lines += [f"{_INDENT}{line}" for line in attempt.tools]
    if attempt.tool_calls > len(attempt.tools) and attempt.tools:
        lines.append(f"{_INDENT}… {attempt.tool_calls - len(attempt.tools)} more tool call(s)")
    if attempt.verification is not None:
        lines += _check(attempt.verification, _INDENT)
    if attempt.regression_checks:
        failed = [run for run in attempt.regression_checks if not run.success]
        verdict = f"{len(failed)} FAILED ({', '.join(run.id for run in failed)})" if failed else "all passed"
        lines.append(f"{_INDENT}regression: {len(attempt.regression_checks)} check(s) re-run, {verdict}")
        for run in failed:
            lines += [f"{_INDENT}  {run.id}: `{run.command}` {check_verdict(run)}",
                      *excerpt_lines(run.output, run.error, _INDENT + "    ")]
    return lines


def _check(check: CheckResult, indent: str) -> list[str]:
    if check.skipped:
        return [f"{indent}check: none configured; the agent's report decided"]
    lines = [f"{indent}check `{check.command}` {check_verdict(check)}" + (f": {for_the_user(check.error)}" if check.error else "")]
    lines += [f"{indent}  | {line}" for line in check.output.rstrip("\n").splitlines()]
    return lines

"""Phase 2 of `orchestrate plan`: each feature's check written first, and seen red.

For every feature still to build, the check writer is forced to answer with `submit_checks`
(the test files and the command that runs them). The files are written into the project
(`check_files`) and the command is run on the current tree (`red`): a check that fails for
the right reason is kept; one that passes (vacuous) or fails for the wrong reason (broken) is
sent back with its output and rewritten, at most `max_rewrites` times, and flagged if it
stays so. A structured call, not the agent loop: the check writer must not build the feature
(an agent with a shell could, and the check would then pass for the wrong reason), its only
output is files we confine and write ourselves, and each round costs one bounded call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ValidationError

from orchestrator.llm.client import ModelClient
from orchestrator.plan.plan_prompts import CHECK_SYSTEM, check_prompt, invalid_check_prompt, rewrite_prompt
from orchestrator.plan.red import RedCheck, Verdict, red_check, syntax_problems
from orchestrator.plan.schema import CheckAnswer, checks_tool
from orchestrator.plan.structured import ForcedToolConversation, StructuredAnswer
from orchestrator.plan.written_checks import WrittenCheckFiles
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.spec.spec_errors import translate

DEFAULT_MAX_REWRITES = 2


@dataclass
class CheckWriterSettings:
    """How phase 2 runs."""

    model: str
    max_tokens: int
    runner: str
    timeout: float
    environment: CommandEnvironment
    """Where the red checks run: the project, in the configured sandbox, without secrets."""
    max_rewrites: int = DEFAULT_MAX_REWRITES
    file_map: str = ""


@dataclass
class FeatureCheck:
    """What phase 2 ended with for one feature."""

    feature_id: str
    files: list[str] = field(default_factory=list)
    verify: str | None = None
    verdict: Verdict | None = None
    reason: str = ""
    rewrites: int = 0
    notes: str = ""

    @property
    def red(self) -> bool:
        return self.verdict == "red"


def suggested_path(feature_id: str) -> str:
    """Where a pytest check for `feature_id` goes: tests/features/test_<id>.py, id made importable."""
    return f"tests/features/test_{feature_id.replace('-', '_').replace('.', '_')}.py"


def write_check(
    client: ModelClient, settings: CheckWriterSettings, spec: FeatureSpec, feature: Feature, files: WrittenCheckFiles,
    on_progress: Callable[[str], None] = lambda _m: None,
) -> FeatureCheck:
    """Ask for `feature`'s check, write it, and see it red; rewrite it while it is not."""
    conversation = ForcedToolConversation(client, settings.model, CHECK_SYSTEM, checks_tool(), settings.max_tokens)
    answer = conversation.ask(_prompt(settings, spec, feature))
    outcome = FeatureCheck(feature.id, verify=spec.check_command(feature))
    for round_ in range(settings.max_rewrites + 1):
        outcome.rewrites = round_
        parsed, problems = _parse(answer, feature.id, files)
        if parsed is None:
            outcome.verdict, outcome.reason = "broken", "; ".join(problems)
            if round_ < settings.max_rewrites:
                answer = conversation.reject(answer, invalid_check_prompt(problems))
            continue
        files.replace(feature.id, {f.path: f.content for f in parsed.files})
        outcome.files, outcome.verify, outcome.notes = [f.path for f in parsed.files], parsed.verify, parsed.notes
        if feature.passes:  # already built: its check is expected to pass, nothing to see red
            outcome.verdict, outcome.reason = None, "marked passes: true; not run at plan time"
            return outcome
        check = red_check(parsed.verify, settings.environment, timeout=settings.timeout)
        outcome.verdict, outcome.reason = check.verdict, check.reason
        on_progress(f"{feature.id}: check {check.verdict} ({check.reason})")
        if check.verdict == "red" or round_ == settings.max_rewrites:
            return outcome
        answer = conversation.reject(answer, _rewrite(check))
    return outcome


def _prompt(settings: CheckWriterSettings, spec: FeatureSpec, feature: Feature) -> str:
    return check_prompt(
        feature, project=spec.project, description=spec.description, file_map=settings.file_map,
        runner=settings.runner, suggested_path=suggested_path(feature.id), suggested_verify=spec.check_command(feature),
    )


def _parse(answer: StructuredAnswer, feature_id: str, files: WrittenCheckFiles) -> tuple[CheckAnswer | None, list[str]]:
    """The answer as a writable check, or the problems that keep it from being one."""
    if answer.cut_off:  # whatever it holds is incomplete
        return None, ["the answer was cut off at max_tokens before its submit_checks call was complete: write shorter files"]
    if answer.data is None:
        return None, ["no submit_checks call with an object input"]
    try:
        parsed = CheckAnswer.model_validate(answer.data)
    except ValidationError as err:
        return None, translate(err)
    contents = {f.path: f.content for f in parsed.files}
    problems = files.problems(feature_id, [f.path for f in parsed.files]) + syntax_problems(contents)
    return (None, problems) if problems else (parsed, [])


def _rewrite(check: RedCheck) -> str:
    result = check.result
    return rewrite_prompt(check.verdict, check.reason, result.command or "", result.output)


def sweep(checks: list[FeatureCheck], settings: CheckWriterSettings) -> None:
    """Run every written check again with all of them in place: one may have swayed another."""
    for outcome in checks:
        if outcome.verdict is None or not outcome.files or outcome.verify is None:
            continue
        check = red_check(outcome.verify, settings.environment, timeout=settings.timeout)
        if check.verdict != outcome.verdict:
            outcome.reason = f"{check.reason} (when run with every other check in place)"
        outcome.verdict = check.verdict

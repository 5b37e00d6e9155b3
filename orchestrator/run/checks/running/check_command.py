"""Run a feature's check command: the exit code is the truth, never the agent's claim.

The check runs as `bash -c COMMAND` in the project directory, in its own process group, so
that a timeout or an interrupt can stop everything it started (test runners, servers,
`sleep &` in a script) and nothing is left running after the check is over. Only a bounded
tail of the output is kept, however much the check prints.

`Verifier` is the seam a feature job checks its work through: `CheckVerifier` runs the check
in the job's workspace; tests and benchmarks pass their own (a timed one, a failing one).
"""

from __future__ import annotations

import codecs
import signal
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from orchestrator.llm.costs.reservations import StopToken
from orchestrator.run.checks.protection import protect
from orchestrator.run.checks.running.pytest_outcomes import (
    PROBE_MODULE,
    ProbeSetup,
    PytestRecord,
    early_end,
    probe_setup,
)
from orchestrator.safety.credentials.redaction import redact_piece
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.processes.process_group import run_in_group
from orchestrator.tools.truncation import tail_of
from shared_base.check_result import CheckResult

DEFAULT_TIMEOUT = 600.0
DEFAULT_OUTPUT_LIMIT = 4000


class Verifier(Protocol):
    """Runs a feature's check for one attempt."""

    def check(self, command: str | None, attempt: int) -> CheckResult: ...


@dataclass
class CheckVerifier:
    """The real verifier: `run_check` in `environment` (the job's workspace), with the run's timeout;
    given the run's `stop` token (`--jobs N`), it starts no check once the run is stopping."""

    environment: CommandEnvironment
    timeout: float = DEFAULT_TIMEOUT
    stop: StopToken | None = None

    @property
    def workspace(self) -> Path:
        return self.environment.workspace

    def check(self, command: str | None, attempt: int) -> CheckResult:
        if self.stop is not None:
            self.stop.raise_if_stopped()
        return run_check(command, self.environment, attempt=attempt, timeout=self.timeout)


def run_check(
    command: str | None,
    environment: CommandEnvironment,
    *,
    attempt: int,
    timeout: float = DEFAULT_TIMEOUT,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> CheckResult:
    """Run `command` in `environment` (its workspace, sandbox and variables) and report whether it passed.

    Exit status 0 is a pass, unless a pytest it ran ended before reporting its results
    (`orchestrator.run.checks.running.pytest_outcomes`). A check that outlives `timeout` seconds is killed with its
    whole process group. Any exception while waiting (KeyboardInterrupt included) kills the check's
    process group and is re-raised. A check that changed the run's configuration
    (`orchestrate.toml`: only possible without a sandbox) fails, and the file is put back.
    """
    return run_check_recorded(command, environment, attempt=attempt, timeout=timeout, output_limit=output_limit)[0]


def run_check_recorded(
    command: str | None, environment: CommandEnvironment, *, attempt: int, timeout: float = DEFAULT_TIMEOUT,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> tuple[CheckResult, PytestRecord]:
    """`run_check`, and what the pytest sessions it ran recorded (the tests and their outcomes)."""
    if command is None or not command.strip():
        return CheckResult(
            command=command, success=False, skipped=True, error="no check command", attempt=attempt
        ), PytestRecord()
    config = protect.take_guard(environment.workspace, None, ())  # the run's configuration as it was
    with probe_setup() as probe:
        result = _run(command, _probed(environment, probe), attempt, timeout, output_limit)
        record = probe.read()
    changed = protect.guard_changes(config)
    if changed:
        how = "could not put it back" if protect.restore(config, changed) else "put back"
        result.success = False
        result.error = (f"the check changed {protect.named(changed)} ({how}): nothing the agent's code does "
                        "may change the run's configuration")
    why = early_end(command, result.exit_code, record) if result.success else None
    if why is not None:
        result = result.model_copy(update={"success": False, "error": why})
    if not result.success and f'plugin "{PROBE_MODULE}"' in result.output:
        result.error = PROBE_LOST
    return result, record


# pytest could not load the probe: the command set PYTHONPATH itself (`PYTHONPATH=src pytest`), replacing ours.
PROBE_LOST = (f"pytest could not load orchestrate's probe ({PROBE_MODULE}): the check command sets PYTHONPATH "
              "itself, replacing the path the probe is on; keep it (`PYTHONPATH=src:$PYTHONPATH ...`), or set "
              "`pythonpath` in the project's pytest configuration")


def _probed(environment: CommandEnvironment, probe: ProbeSetup) -> CommandEnvironment:
    """`environment` with the pytest probe's variables, and its directory writable in the sandbox
    (the probe writes its record from inside)."""
    sandbox = environment.sandbox
    if sandbox.active:
        sandbox = replace(sandbox, write=(*sandbox.write, probe.directory))
    return replace(environment, sandbox=sandbox, variables=probe.environment(environment.variables))


def _run(
    command: str, environment: CommandEnvironment, attempt: int, timeout: float, output_limit: int
) -> CheckResult:
    tail = _OutputTail(output_limit)
    try:
        finished = run_in_group(command, environment, timeout=timeout, on_output=tail.add)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.filename is not None:
            reason = f"{reason}: {exc.filename}"
        return CheckResult(
            command=command, success=False, error=f"could not start: {reason}", attempt=attempt
        )
    if finished.timed_out:
        return CheckResult(
            command=command,
            success=False,
            exit_code=None,
            output=tail.text(),
            error=f"timed out after {timeout:g} s",
            attempt=attempt,
        )
    code = finished.exit_code
    return CheckResult(
        command=command,
        success=code == 0,
        exit_code=code,
        # The check runs code the agent wrote; whatever it prints goes back to the model,
        # redacted (`_OutputTail.text`).
        output=tail.text(),
        error=_explain(code),
        attempt=attempt,
    )


def _explain(code: int | None) -> str | None:
    """A short hint for exit statuses whose meaning is conventional."""
    if code is None:
        return None
    if code == 127:
        return "command not found"
    if code == 126:
        return "command not executable"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return None


class _OutputTail:
    """Decoded output, keeping only about `limit` trailing characters in memory."""

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 0)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._chunks: deque[str] = deque()
        self._kept = 0
        self._total = 0

    def add(self, data: bytes) -> None:
        self._push(self._decoder.decode(data))

    def _push(self, text: str) -> None:
        if not text:
            return
        self._chunks.append(text)
        self._kept += len(text)
        self._total += len(text)
        while self._chunks and self._kept - len(self._chunks[0]) >= self._limit:
            self._kept -= len(self._chunks.popleft())

    def text(self) -> str:
        """The tail, redacted, cut at a line boundary and marked when earlier output was dropped."""
        self._push(self._decoder.decode(b"", final=True))
        text = "".join(self._chunks)
        # Redacted before the cut below; what memory kept may itself start inside a secret.
        text = redact_piece(text, starts_at_cut=self._total > len(text))
        if self._total <= self._limit:
            return text
        # The note counts against the limit; its length is at most that of the largest count.
        budget = max(self._limit - len(_omitted_note(self._total)), 0)
        kept = tail_of(text, budget, starts_at_cut=True) if budget else ""
        newline = kept.find("\n")
        if 0 <= newline < len(kept) - 1:
            kept = kept[newline + 1 :]
        return _omitted_note(self._total - len(kept)) + kept


def _omitted_note(count: int) -> str:
    return f"…[{count} earlier characters omitted]\n"

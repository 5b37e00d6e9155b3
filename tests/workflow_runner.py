"""Run a GitHub Actions job of a shipped workflow file on this machine, as a runner would.

Every `run:` step runs in bash as GitHub runs it (`bash --noprofile --norc -eo pipefail`), with
the workflow's and the step's `env:`, after its `${{ ... }}` expressions are replaced by the
values a test gives (an expression it does not give fails the test: a workflow that grows a new
one must be looked at here). `uses:` steps are GitHub's own actions: the test says what each
does (`actions/checkout` = a clone of the local bare remote, artifacts = directories copied).
`if:` understands what the shipped workflows use: `always()`, `steps.<id>.outcome == '...'`,
`inputs.<name>` and `&&`; a step without `if:` runs while no earlier step has failed.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
Action = Callable[[dict[str, Any], "Job"], bool]  # a `uses:` step done by the test: did it succeed?


def load_workflow(path: Path) -> dict[str, Any]:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(workflow, dict)
    return workflow


@dataclass
class Job:
    """One job of `workflow`, run in `workspace`."""

    workflow: dict[str, Any]
    name: str
    workspace: Path
    values: dict[str, str]  # expression -> its value (`matrix.shard`, `secrets.X`, `github.token`, ...)
    base_env: Mapping[str, str]
    actions: dict[str, Action]  # `uses:` without its `@version` -> what the test does instead
    outcomes: dict[str, str] = field(default_factory=dict)  # step id -> success | failure | skipped
    ran: list[tuple[str, int]] = field(default_factory=list)  # (step name, exit code) of every run: step
    failed: bool = False

    def expand(self, text: str) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match.group(1)
            assert expression in self.values, f"the test gives no value for ${{{{ {expression} }}}}"
            return self.values[expression]

        return _EXPRESSION.sub(value, text)

    def run(self) -> bool:
        """Every step in order; True when the job succeeded."""
        for step in self.workflow["jobs"][self.name]["steps"]:
            self._step(step)
        return not self.failed

    def _step(self, step: dict[str, Any]) -> None:
        step_id = step.get("id")
        if not self._wanted(str(step.get("if", ""))):
            if step_id:
                self.outcomes[step_id] = "skipped"
            return
        ok = self._uses(step) if "uses" in step else self._shell(step)
        if step_id:
            self.outcomes[step_id] = "success" if ok else "failure"
        if not ok and not step.get("continue-on-error"):
            self.failed = True

    def _uses(self, step: dict[str, Any]) -> bool:
        action = str(step["uses"]).split("@")[0]
        assert action in self.actions, f"the test does not stand in for {action}"
        return self.actions[action](step, self)

    def _shell(self, step: dict[str, Any]) -> bool:
        script = self.expand(str(step["run"]))
        if script.startswith("pip install"):
            return True  # the package under test is on PYTHONPATH, `orchestrate` on PATH
        env = dict(self.base_env)
        for key, value in {**self.workflow.get("env", {}), **step.get("env", {})}.items():
            env[key] = self.expand(str(value))
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=self.workspace,
                              env=env, capture_output=True, text=True, timeout=120)
        self.ran.append((str(step.get("name", script[:40])), done.returncode))
        if done.returncode != 0:
            self.ran.append((done.stdout[-2000:], -1))
            self.ran.append((done.stderr[-2000:], -1))
        return done.returncode == 0

    def _wanted(self, condition: str) -> bool:
        condition = self.expand(condition).strip()
        if not condition:
            return not self.failed
        terms = [term.strip() for term in condition.split("&&")]
        if "always()" not in terms and self.failed:
            return False
        return all(self._term(term) for term in terms)

    def _term(self, term: str) -> bool:
        if term == "always()":
            return True
        left, equals, right = term.partition("==")
        if equals:
            return self._lookup(left.strip()) == right.strip().strip("'")
        return self._lookup(term) not in ("", "false")

    def _lookup(self, name: str) -> str:
        parts = name.split(".")
        if parts[0] == "steps" and parts[2] == "outcome":
            return self.outcomes.get(parts[1], "")
        assert name in self.values, f"the test gives no value for {name} (in an if:)"
        return self.values[name]

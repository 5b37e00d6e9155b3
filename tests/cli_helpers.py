"""Running `orchestrate` as a user would, against the fake API: in the test's own process
(`tests/cli_in_process.py`) unless the test asks for a process of its own (`process=True`)."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import cli_in_process

REPO_ROOT = Path(__file__).resolve().parent.parent
TEST_KEY = "sk-ant-test-0123456789abcdef"
# Back-off between outer retries is shortened so fault tests stay fast.
FAST_RETRIES = {"ORCHESTRATE_RETRY_MAX_WAIT": "0.05", "ORCHESTRATE_API_MAX_RETRIES": "2"}


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def cli_env(fake: Any | None = None, key: str | None = TEST_KEY, **extra: str) -> dict[str, str]:
    # ORCHESTRATE_SANDBOX is the suite's choice (tests/conftest.py), not a leftover.
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "ORCHESTRATE_")) or k == "ORCHESTRATE_SANDBOX"
    }
    env.update(FAST_RETRIES)
    env["CI"] = "true"
    # The checkout under test, whichever copy of the package pip installed last.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    if fake is not None:
        env["ANTHROPIC_BASE_URL"] = fake.base_url
    if key is not None:
        env["ANTHROPIC_API_KEY"] = key
    env.update(extra)
    return env


def orchestrate_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "orchestrator", *args]


def run_cli(
    args: Sequence[str], cwd: Path, fake: Any | None = None, *, key: str | None = TEST_KEY,
    timeout: float = 120, process: bool = False, **extra: str,
) -> CliResult:
    """`orchestrate ARGS` in `cwd` with the suite's environment (`cli_env`), its exit code and output.

    It runs in this process (`cli_in_process.run_here`: the CLI's own entry, everything it
    changed put back after) unless `process=True`: a new `python -m orchestrator` process, for a
    test that needs one (it signals or kills the CLI, reads its /proc, gives it a terminal, or
    checks how the process itself ends). What cannot run here raises `NeedsProcess`, saying why.
    """
    env = cli_env(fake, key, **extra)
    if not process:
        return CliResult(*cli_in_process.run_here(args, cwd, env, timeout))
    proc = subprocess.run(
        orchestrate_command(*args), cwd=cwd, env=env, capture_output=True,
        text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def write_spec(
    directory: Path, count: int, *, name: str = "spec.json", verify: str | None = "test -f features/{id}.txt",
    extra: dict[str, dict[str, Any]] | None = None, **top: Any,
) -> Path:
    """A spec of `count` features feat-01.. whose checks pass once the fake's default plan ran."""
    features = []
    for index in range(1, count + 1):
        fid = f"feat-{index:02d}"
        feature: dict[str, Any] = {
            "id": fid, "name": f"Feature {index}", "category": "backend" if index % 2 else "frontend",
            "description": f"Build part {index} of the widget service.",
            "acceptance": [f"features/{fid}.txt exists"],
        }
        if verify is not None:
            feature["verify"] = verify.replace("{id}", fid)
        feature.update((extra or {}).get(fid, {}))
        features.append(feature)
    spec = {"project": "widget", "description": "A widget service built for tests.", "features": features, **top}
    path = directory / name
    path.write_text(json.dumps(spec, indent=2))
    return path


def file_tree(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every entry under `root` (not following links, leaving out `skip`) -> a digest of what it is."""
    found: dict[str, str] = {}
    for current, dirs, files in os.walk(root):
        here = Path(current)
        if skip is not None and (here == skip or skip in here.parents):
            dirs[:] = []
            continue
        for name in dirs + files:
            path = here / name
            if skip is not None and path == skip:
                continue
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[rel] = "dir"
    return found


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def read_events(project: Path) -> list[dict[str, Any]]:
    """The run's event journal (`.autonomous/events.jsonl`), one dict a line."""
    return [json.loads(line) for line in (project / ".autonomous/events.jsonl").read_text().splitlines()]


def plain_summarizer(request: dict[str, Any]) -> dict[str, Any]:
    """A summarizer answer that is valid and adds nothing: the stores must keep what they have."""
    user_text = json.dumps(request.get("messages", []))
    return {
        "summary": f"The project so far: {user_text.count('Implemented')} feature report(s) summarized.",
        "newDecisions": [], "retiredDecisionIds": [], "newConstraints": [], "retiredConstraintIds": [],
        "newFailures": [], "preventions": [],
    }


def first_prompt(fake: Any, feature_id: str, attempt_index: int = 0) -> str:
    """The first user message of one attempt of a feature, as the fake received it."""
    starts = [r for r in fake.agent_requests(feature_id) if len(r.body["messages"]) == 1]
    content = starts[attempt_index].body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def start_tmux_pane(tmp_path: Path, command: list[str], env: dict[str, str], cwd: Path) -> tuple[list[str], Path]:
    """Start `command` in a detached tmux pane (a real terminal, 160x50) with exactly `env`; the
    tmux command line for this pane's server (kill it when done) and the file its exit code lands
    in. The server is named by the test process too: two suites at once must not share one."""
    socket, done = f"orchestrate-test-{os.getpid()}-{tmp_path.name}", tmp_path / "exit-code"
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
    script = tmp_path / "in-tmux.sh"
    script.write_text(f"cd {shlex.quote(str(cwd))}\nenv -i {exports} {shlex.join(command)}\n"
                      f"echo $? > {shlex.quote(str(done))}.tmp && mv {shlex.quote(str(done))}.tmp {shlex.quote(str(done))}\n"
                      "sleep 600\n")
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-x", "160", "-y", "50", f"sh {shlex.quote(str(script))}"], check=True)
    return tmux, done

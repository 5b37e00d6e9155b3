"""How the Claude Code CLI is started for one attempt: its own environment, home and sandbox.

The SDK starts the CLI at `cli_path` with the parent's whole environment merged under ours;
we point `cli_path` at a small wrapper written for the attempt, which throws that environment
away and executes the real CLI with only what the attempt allows: the `CommandEnvironment`'s
variables (no secrets), an empty home of its own, the API endpoint (the metering proxy with a
dummy key), and the few variables the SDK itself sets for the CLI. On a Claude plan (no
endpoint) the CLI keeps the user's home instead, where its own sign-in lives. With a bubblewrap sandbox
the CLI runs inside it, like the agent's commands: the workspace writable, the protected paths
read-only, the real home hidden, no capability (as root too: the CLI then runs as another uid
in a user namespace, `sandbox.NESTING_UID`), and each command of the agent in a nested one that
masks the CLI's sign-in (`sign_in.shell_prefix`, through `CLAUDE_CODE_SHELL_PREFIX`) and installs
the sandbox's whole seccomp filter again (the CLI's own lets it make the nested namespaces). The wrapper also
starts a session of its own and dies with its parent, and every process it leads carries the
attempt's marker, so that an interrupt or the attempt's end leaves none of them running (`orchestrator.safety.processes.descendants`).
"""

from __future__ import annotations

import atexit
import dataclasses
import itertools
import json
import os
import shutil
import sys
import tempfile
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from orchestrator.claude_code.guards.sign_in import shell_prefix
from orchestrator.safety.bubblewrap.sandbox_init import PROXY_PORT
from orchestrator.safety.bubblewrap.socket_filter import filter_bytes
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.processes.descendants import CommandProcesses

LOOPBACK = ("127.0.0.1", "localhost", "::1")
PLAN_HOSTS = ("api.anthropic.com", "*.anthropic.com", "claude.ai")  # a Claude plan: the API and the sign-in's
TERM_GRACE = 2.0  # seconds the CLI's leftovers get between SIGTERM and SIGKILL
# What the SDK sets for the CLI and the wrapper keeps (see ClaudeAgentOptions.env).
SDK_VARIABLES = ("CLAUDE_AGENT_SDK_VERSION", "CLAUDE_AGENT_SDK_CLIENT_APP", "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP")
# The CLI's model choices besides --model (its small fast model, its subagents', each alias).
MODEL_ALIASES = ("ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
                 "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_FABLE_MODEL")
CLOUD_SWITCHES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no telemetry, updates or error reports: the API alone
    "CLAUDE_CODE_ENTRYPOINT": "sdk-py",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE": "1",  # the SDK waits for the CLI's idle state before closing
    "DISABLE_AUTOUPDATER": "1",
    "ENABLE_TOOL_SEARCH": "false",  # report_feature among the tools the model is shown, not found by a search
}
_WRAPPER = '''#!{python} -IS
# Written by orchestrate for one Claude Code attempt: the CLI with this environment only.
import ctypes, json, os, sys
plan = json.loads({plan!r})
ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGKILL when orchestrate dies
os.setsid()  # a group of its own: the attempt stops it whole
env = dict(plan["env"])
env.update({{name: os.environ[name] for name in plan["keep"] if name in os.environ}})
os.execve(plan["argv"][0], plan["argv"] + sys.argv[1:], env)
'''


@dataclass(frozen=True)
class ApiEndpoint:
    """Where the CLI sends its Messages API calls, and the key it sends there."""

    base_url: str
    api_key: str  # a dummy when the metering proxy adds the real credentials
    model: str | None = None  # the one model the endpoint serves: every model alias of the CLI names it


class CliLaunch:
    """The attempt's wrapper, home and marker; `with` it around the session."""

    def __init__(
        self, cli: Path, environment: CommandEnvironment, endpoint: ApiEndpoint | None, *, max_output_tokens: int,
    ) -> None:
        """`endpoint` None: a Claude plan, through the CLI's own sign-in in the user's home (`billing`)."""
        self.cli, self.environment, self.endpoint = cli, environment, endpoint
        self.max_output_tokens = max_output_tokens
        self.directory = _ATTEMPT_DIRECTORIES.take()
        self.home = self.directory / "home" if endpoint is not None else _user_home(environment)
        self.home.mkdir(exist_ok=True)
        self.processes = CommandProcesses()
        self.shell_prefix = self._shell_prefix()
        self.variables = self._variables()
        self.wrapper = self.directory / "claude"
        self.argv = self._argv()  # the CLI's command line before the SDK's arguments
        plan = {"argv": self.argv, "env": self.variables, "keep": list(SDK_VARIABLES)}
        self.wrapper.write_text(_WRAPPER.format(python=sys.executable, plan=json.dumps(plan)), encoding="utf-8")
        self.wrapper.chmod(0o700)

    def _shell_prefix(self) -> Path | None:
        """The script every agent command runs through, masking the sign-in; None without a sandbox
        (no bubblewrap to mask with: docs/claude-code.md says the sign-in is then as readable as any file)."""
        sandbox = self.environment.sandbox
        if not sandbox.active:
            return None
        path, seccomp = self.directory / "shell-prefix", self.directory / "seccomp.bpf"
        seccomp.write_bytes(filter_bytes())  # the sandbox's whole filter, for each agent command
        seccomp.chmod(0o400)
        path.write_text(shell_prefix(sandbox.bwrap, shutil.which("bash") or "/bin/bash", self.home, seccomp,
                                     self._commands_proxy()), encoding="utf-8")
        path.chmod(0o500)  # and read-only in the sandbox: the agent cannot take the mask off
        return path

    def _commands_proxy(self) -> dict[str, str | None]:
        """On a Claude plan the CLI's proxy variables lead to its own hosts (`_argv`): its commands
        get the project's proxy back, or none when the project lists no host."""
        sandbox = self.environment.sandbox
        if self.endpoint is not None or sandbox.network:
            return {}
        url = f"http://127.0.0.1:{PROXY_PORT}" if sandbox.allow_hosts else None
        return dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), url)

    def _variables(self) -> dict[str, str]:
        """All the CLI sees of the environment: built from the attempt's variables, never ours whole."""
        env = self.processes.environment(self.environment.variables)
        env.update(QUIET)
        env.update({"HOME": str(self.home), "PWD": str(self.environment.workspace),
                    # the run's max_tokens per call, as the built-in loop sends: the cap's worst case stays small
                    "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(self.max_output_tokens)})
        if self.shell_prefix is not None:
            env["CLAUDE_CODE_SHELL_PREFIX"] = str(self.shell_prefix)
        if self.endpoint is not None:
            env.update({"ANTHROPIC_BASE_URL": self.endpoint.base_url, "ANTHROPIC_API_KEY": self.endpoint.api_key})
            for name in CLOUD_SWITCHES:  # the CLI would go to the cloud itself, past the metering proxy
                env.pop(name, None)
            if self.endpoint.model:  # its small-model and subagent calls too: the proxy serves no other
                env.update(dict.fromkeys(MODEL_ALIASES, self.endpoint.model))
        return env

    def _argv(self) -> list[str]:
        """The CLI, inside the sandbox when there is one: its home and its own files visible, and of
        the network only the API endpoint (on this machine's loopback: the metering proxy)."""
        sandbox = self.environment.sandbox
        if not sandbox.active:
            return [str(self.cli)]
        prefix = [self.shell_prefix, self.shell_prefix.with_name("seccomp.bpf")] if self.shell_prefix else []
        visible = (self.cli.parent, *prefix)
        if self.endpoint is None:  # its sign-in in the user's home, and Anthropic's hosts: its own, not its commands'
            sign_in = tuple(path for path in (self.home / ".claude", self.home / ".claude.json") if path.exists())
            sandbox = dataclasses.replace(sandbox, read=(*sandbox.read, *visible), write=(*sandbox.write, *sign_in))
            return sandbox.wrap([str(self.cli)], self.environment.workspace,
                                own_hosts=(*sandbox.allow_hosts, *PLAN_HOSTS), nests=True)
        address = urllib.parse.urlsplit(self.endpoint.base_url)
        host, port = address.hostname or "", address.port or (443 if address.scheme == "https" else 80)
        loopback = host in LOOPBACK
        sandbox = dataclasses.replace(
            sandbox, read=(*sandbox.read, *visible), write=(*sandbox.write, self.home),
            # An endpoint elsewhere (no proxy in between) is one more host its proxy lets through.
            allow_hosts=sandbox.allow_hosts if loopback or not host else (*sandbox.allow_hosts, host),
        )
        return sandbox.wrap([str(self.cli)], self.environment.workspace, forward_ports=[port] if loopback else [],
                            nests=True)

    def __enter__(self) -> CliLaunch:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> list[int]:
        """Stop whatever the CLI left running, remove the attempt's files; the pids that would not stop."""
        try:
            return self.processes.stop_leftovers(grace=TERM_GRACE)
        finally:
            _ATTEMPT_DIRECTORIES.give_back(self.directory)


class _AttemptDirectories:
    """Where attempts keep their wrapper and home: the same path for every attempt of a run (one
    per worker under --jobs), emptied for each. The home's path enters Claude Code's system prompt,
    so a new path each attempt would write its prompt cache again (about 7k tokens) every attempt.
    Private all the same: the parent is this process's own `mkdtemp` (mode 0700), gone at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parent: Path | None = None
        self._busy: set[Path] = set()

    def take(self) -> Path:
        with self._lock:
            if self._parent is None:
                self._parent = Path(tempfile.mkdtemp(prefix="orchestrate-claude-"))
                atexit.register(shutil.rmtree, self._parent, ignore_errors=True)
            taken = {path.name for path in self._busy}
            slot = self._parent / next(f"attempt-{n}" for n in itertools.count() if f"attempt-{n}" not in taken)
            self._busy.add(slot)
        shutil.rmtree(slot, ignore_errors=True)  # what an earlier attempt left, had its clean-up failed
        slot.mkdir(mode=0o700)
        return slot

    def give_back(self, slot: Path) -> None:
        shutil.rmtree(slot, ignore_errors=True)
        with self._lock:
            self._busy.discard(slot)


_ATTEMPT_DIRECTORIES = _AttemptDirectories()


def _user_home(environment: CommandEnvironment) -> Path:
    """The user's home, where Claude Code keeps its sign-in (read by the CLI alone, never by us)."""
    return Path(environment.variables.get("HOME") or os.path.expanduser("~"))

"""Keeping the machine and the credentials safe from what the agent runs.

Owns:
    environment     `CommandEnvironment`: the workspace, sandbox, protected paths and variables
                    every command the model causes runs with; required wherever one is run
    sandbox_setting the sandbox and variables a project's settings give, from plain values
                    (`orchestrator.run.config_sandbox` reads them from the config)
    bubblewrap/     the sandbox: bubblewrap or none (`Sandbox.wrap`), its seccomp allowlist and
                    how it reaches each command (`sandbox_init`, the sandbox's first program),
                    the network proxy and port forwards
    processes/      running a command in its own process group and session, with a timeout,
                    and stopping everything it started (`run_in_group`, `held_signals`)
    credentials/    which values are credentials, their redaction in all we write or print,
                    and the key wiped from this process's /proc environ block

May import: the standard library only; nothing of `orchestrator` (it is a bottom layer:
commands -> run -> (context_agent, tools) -> store -> llm/spec/safety).
"""

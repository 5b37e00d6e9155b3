"""Keeping the machine and the credentials safe from what the agent runs.

Owns:
    secrets         which values are credentials, and the scrubbed environment for the agent's
                    commands and the checks
    redaction       the key (and anything shaped like one) replaced in all we write or print
    own_environ     `hide_own_secrets()`: the key wiped from this process's /proc environ block
    sandbox         bubblewrap, or none: how a command is isolated (`Sandbox.wrap`)
    seccomp_filter  the sandbox's seccomp allowlist as data, and its BPF program
                    (`syscall_numbers`: the call numbers per machine; `socket_filter` hands it
                    to bwrap or to `sandbox_init`, the sandbox's first program)
    environment     `CommandEnvironment`: the workspace, sandbox, protected paths and variables
                    every command the model causes runs with; required wherever one is run
    process_group   running a command in its own process group and session, with a timeout,
                    and stopping everything it started (`run_in_group`, `held_signals`)
    descendants     finding the processes a command started that left its group (subreaper)

May import: the standard library only; nothing of `orchestrator` (it is a bottom layer:
commands -> run -> (context_agent, tools) -> store -> llm/spec/safety).
"""

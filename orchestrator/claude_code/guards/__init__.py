"""What Claude Code's agent may not touch: protected files, and the CLI's own sign-in.

    write_guard   the `PreToolUse` hook refusing file tools on what the built-in editor refuses
    sign_in       the sign-in kept out of the agent's reach (`shell_prefix`, `sign_in_refusal`)
    sandbox_view  paths resolved as the CLI sees them, in its sandbox's mount namespace
"""

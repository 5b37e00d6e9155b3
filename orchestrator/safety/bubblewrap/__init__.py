"""The sandbox every model-caused command runs in: bubblewrap (or none), its seccomp filter, its way out.

    sandbox          bubblewrap, or none: how a command is isolated (`Sandbox.wrap`)
    stand_in         a verification checkout standing in for the live repository
    seccomp_filter   the seccomp allowlist as data, and its BPF program
    syscall_numbers  the system call numbers per machine
    socket_filter    how the filter reaches each command: through bwrap, or `sandbox_init`
    sandbox_init     the sandbox's first program (run by its source, standard library only)
    net_proxy        the HTTP proxy to `[sandbox] allow_hosts`, the only way to the network
    port_forward     one host loopback port reachable inside, and nothing else
"""

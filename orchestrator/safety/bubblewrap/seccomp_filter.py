"""The sandbox's seccomp filter: an allowlist, in the spirit of Docker's default profile.

Every sandboxed command runs under it (`socket_filter` hands it to bubblewrap, or to
`sandbox_init` when a proxy's bridge must be forked first). A system call is let through only
if `ALLOWED` names it, or an argument rule below passes it; any other answers EPERM, as under
Docker, except the numbers after the newest call this module knows (`KNOWN_UP_TO`), which
answer ENOSYS, as runc does: a C library that probes a newer call falls back to an older one
on ENOSYS only. `clone3` (whose flags a filter cannot read) and io_uring (which opens files and
sockets past seccomp) answer ENOSYS too, so the C library and event loops fall back.

`ALLOWED` is Docker's unconditional list (moby's profiles/seccomp/default.json) as it applies to
x86_64 and aarch64, less what `REFUSED` names, plus the calls Linux added up to 6.7 that the C
library uses (`fchmodat2`, `map_shadow_stack`, the futex2 calls, `cachestat`). Argument rules:
`socket` opens only `AF_INET`, `AF_INET6` and `AF_NETLINK` (`AF_UNIX` EPERM: a host service's
socket file; any other family EAFNOSUPPORT: `AF_VSOCK`, `AF_PACKET`, `AF_ALG`, ...); `clone` and
`unshare` without a `CLONE_NEW*` flag; `personality` with Docker's five values. A call of
another architecture, or an x32 call, is refused: i386's `socketcall` would pass a filter keyed
on `socket`. The nesting variant (the Claude Code CLI's sandbox, whose shell prefix starts a
bubblewrap for each command) also allows `NESTING`: new namespaces, `chroot` and the mount
family (with no capability, a mount works only in a namespace of its own making).

Hand-assembled rather than built with libseccomp: bubblewrap takes the program as a file, the
program is a short linear chain (the arch check, four argument rules, then one compare per run
of allowed numbers), and libseccomp's Python bindings need the system's `libseccomp.so`, which
`pip install` cannot bring. The call numbers (`syscall_numbers`) are held to libseccomp's tables
by a unit test where the library is installed (Debian's apt depends on it).
"""

from __future__ import annotations

import os
import struct

from orchestrator.safety.bubblewrap.syscall_numbers import SYSCALLS

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16
_LD_W_ABS, _JEQ_K, _JGT_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x25, 0x35, 0x45, 0x06
ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
EPERM, ENOSYS, EAFNOSUPPORT = _ERRNO | 1, _ERRNO | 38, _ERRNO | 97
KNOWN_UP_TO = 456  # futex_requeue, Linux 6.7: from 424 on both machines number their calls alike
_AF_UNIX = 1
SOCKET_FAMILIES = (2, 10, 16)  # AF_INET, AF_INET6, AF_NETLINK (the C library's interface and route queries)
# PER_LINUX, PER_LINUX32, UNAME26, both, and the query: no ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
_X32_BIT = 0x40000000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare also NEWTIME (0x80,
# which clone's low byte, the exit signal, would collide with).
CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
UNSHARE_NEW = CLONE_NEW | 0x00000080

ALLOWED: dict[str, tuple[str, ...]] = {
    "files and directories": (
        "open", "openat", "openat2", "creat", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "flock",
        "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
        "getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "mknod", "mknodat", "rmdir",
        "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "rename", "renameat", "renameat2",
        "readlink", "readlinkat", "truncate", "ftruncate", "fallocate", "umask", "chmod", "fchmod", "fchmodat",
        "fchmodat2", "chown", "fchown", "fchownat", "lchown", "utime", "utimes", "utimensat", "futimesat",
        "getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr", "listxattr", "llistxattr",
        "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
    ),
    "reading and writing": (
        "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
        "lseek", "sendfile", "splice", "tee", "vmsplice", "copy_file_range", "fsync", "fdatasync", "sync",
        "syncfs", "sync_file_range", "fadvise64", "readahead", "cachestat", "pipe", "pipe2", "ioctl",
        "io_setup", "io_submit", "io_getevents", "io_pgetevents", "io_cancel", "io_destroy",
    ),
    "waiting, events, timers and the clock (read only)": (
        "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
        "epoll_pwait", "epoll_pwait2", "epoll_ctl_old", "epoll_wait_old", "eventfd", "eventfd2", "signalfd",
        "signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime", "inotify_init", "inotify_init1",
        "inotify_add_watch", "inotify_rm_watch", "fanotify_mark", "futex", "futex_waitv", "futex_wake",
        "futex_wait", "futex_requeue", "set_robust_list", "get_robust_list", "nanosleep", "clock_nanosleep",
        "pause", "alarm", "getitimer", "setitimer", "timer_create", "timer_settime", "timer_gettime",
        "timer_getoverrun", "timer_delete", "clock_gettime", "clock_getres", "gettimeofday", "time",
    ),
    "memory": (
        "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "mlock", "mlock2",
        "mlockall", "munlock", "munlockall", "membarrier", "memfd_create", "memfd_secret", "remap_file_pages",
        "pkey_alloc", "pkey_free", "pkey_mprotect", "map_shadow_stack",
    ),
    "processes, threads and signals (`clone`, `unshare`, `personality`: by their arguments)": (
        "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "kill", "tkill", "tgkill",
        "rt_sigaction", "rt_sigprocmask", "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait", "rt_sigqueueinfo",
        "rt_tgsigqueueinfo", "rt_sigreturn", "sigaltstack", "restart_syscall", "set_tid_address", "rseq",
        "arch_prctl", "modify_ldt", "get_thread_area", "set_thread_area", "prctl", "pidfd_open",
        "pidfd_send_signal", "process_mrelease", "getpid", "gettid", "getppid", "getpgid", "setpgid", "getpgrp",
        "getsid", "setsid", "getpriority", "setpriority", "ioprio_get", "ioprio_set", "sched_yield",
        "sched_getaffinity", "sched_setaffinity", "sched_getattr", "sched_setattr", "sched_getparam",
        "sched_setparam", "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
        "sched_get_priority_min", "sched_rr_get_interval", "getrlimit", "setrlimit", "prlimit64", "getrusage",
        "times", "uname", "sysinfo", "getcpu", "getrandom", "capget", "capset", "seccomp",
        "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
    ),
    "users and groups (no capability: a process can only give up ids)": (
        "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setuid", "setgid",
        "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid", "setgroups",
    ),
    "sockets (`socket`: by its family)": (
        "socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname", "getpeername",
        "getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown",
    ),
    "System V IPC and POSIX message queues (the sandbox's own IPC namespace)": (
        "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget", "msgsnd",
        "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    ),
}

MOUNT_CALLS = ("mount", "umount2", "pivot_root", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree",
               "mount_setattr")
# Not in `ALLOWED`, so refused (EPERM) like every call it leaves out; named here because each
# widens what a process reaches. Docker allows the last two groups' `ptrace` (kernel >= 4.8),
# `process_vm_*`, `name_to_handle_at`, `clock_adjtime` and `adjtimex` to every container.
REFUSED: dict[str, tuple[str, ...]] = {
    "the mount family": MOUNT_CALLS,
    "namespaces and roots": ("setns", "chroot", "sethostname", "setdomainname"),
    "the kernel's keyring, BPF, profiling": ("keyctl", "add_key", "request_key", "bpf", "perf_event_open"),
    "modules, kexec, the machine": (
        "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
        "acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "fanotify_init", "lookup_dcookie", "iopl", "ioperm",
        "uselib", "sysfs", "ustat",
    ),
    "the clock": ("settimeofday", "clock_settime", "clock_adjtime", "adjtimex"),
    "NUMA memory policy": ("get_mempolicy", "set_mempolicy", "mbind", "migrate_pages", "move_pages",
                           "set_mempolicy_home_node"),
    "another process": ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp",
                        "userfaultfd"),
    "file handles (the \"shocker\" escape)": ("name_to_handle_at", "open_by_handle_at"),
}
UNSUPPORTED = ("io_uring_setup", "io_uring_enter", "io_uring_register")  # ENOSYS: callers fall back
# The nesting variant's: what its bubblewrap needs to build each command's sandbox.
NESTING = ("setns", "chroot", "clone3", *MOUNT_CALLS)


class _Arch:
    def __init__(self, audit: int, x32: bool) -> None:
        self.audit, self.x32 = audit, x32


# The audit architecture of each machine (linux/audit.h), and whether it has x32 calls to refuse.
ARCHES = {"x86_64": _Arch(0xC000003E, x32=True), "aarch64": _Arch(0xC00000B7, x32=False)}

Rule = tuple[int, int, int, int]  # struct sock_filter: code, jump if true, jump if false, constant


def machine() -> str:
    name = os.uname().machine.lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)


def filter_program(arch_name: str, *, namespaces: bool = False) -> bytes:
    """The seccomp BPF program (struct sock_filter[]) for `arch_name`, one of `ARCHES`;
    `namespaces`: the nesting variant (`NESTING` allowed, `clone` and `unshare` whole)."""
    arch, numbers = ARCHES[arch_name], SYSCALLS[arch_name]
    # Jumps count instructions after this one. Every block that loads an argument ends in
    # returns on each branch, so the next block still finds the call's number loaded.
    rules: list[Rule] = [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 1, 0, arch.audit), (_RET_K, 0, 0, EPERM),
                         (_LD_W_ABS, 0, 0, _NR)]
    if arch.x32:
        rules += [(_JGE_K, 0, 1, _X32_BIT), (_RET_K, 0, 0, EPERM)]
    for name in (*UNSUPPORTED, *([] if namespaces else ["clone3"])):
        rules += [(_JEQ_K, 0, 1, numbers[name]), (_RET_K, 0, 0, ENOSYS)]
    rules += _by_first_argument(numbers["socket"], [(_AF_UNIX, EPERM), *((f, ALLOW) for f in SOCKET_FAMILIES)],
                                otherwise=EAFNOSUPPORT)
    rules += _by_first_argument(numbers["personality"], [(value, ALLOW) for value in PERSONALITIES], otherwise=EPERM)
    allowed = [name for group in ALLOWED.values() for name in group]
    if namespaces:
        allowed += [*NESTING, "clone", "unshare"]
    else:
        rules += _without_flags(numbers["clone"], CLONE_NEW) + _without_flags(numbers["unshare"], UNSHARE_NEW)
    for low, high in _runs(sorted({numbers[name] for name in allowed if name in numbers})):
        if low == high:
            rules += [(_JEQ_K, 0, 1, low), (_RET_K, 0, 0, ALLOW)]
        else:
            rules += [(_JGE_K, 0, 2, low), (_JGT_K, 1, 0, high), (_RET_K, 0, 0, ALLOW)]
    rules += [(_JGT_K, 0, 1, KNOWN_UP_TO), (_RET_K, 0, 0, ENOSYS), (_RET_K, 0, 0, EPERM)]
    return b"".join(struct.pack("=HBBI", *rule) for rule in rules)


def _by_first_argument(number: int, answers: list[tuple[int, int]], otherwise: int) -> list[Rule]:
    """Call `number` answered by the low 32 bits of its first argument (little-endian on both machines)."""
    rules: list[Rule] = [(_JEQ_K, 0, 2 * len(answers) + 2, number), (_LD_W_ABS, 0, 0, _ARG0)]
    for value, answer in answers:
        rules += [(_JEQ_K, 0, 1, value), (_RET_K, 0, 0, answer)]
    return [*rules, (_RET_K, 0, 0, otherwise)]


def _without_flags(number: int, flags: int) -> list[Rule]:
    """Call `number` allowed unless its first argument has one of `flags`."""
    return [(_JEQ_K, 0, 4, number), (_LD_W_ABS, 0, 0, _ARG0), (_JSET_K, 0, 1, flags), (_RET_K, 0, 0, EPERM),
            (_RET_K, 0, 0, ALLOW)]


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Sorted `numbers` as runs of consecutive ones, (first, last)."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and runs[-1][1] == number - 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs

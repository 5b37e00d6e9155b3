"""The sandbox's seccomp filter, as a program: run by a small BPF interpreter here for each
machine, it answers each system call as the kernel would: the allowlist lets its calls through
and refuses every other number; its call numbers are held to libseccomp's own tables where the
library is installed. And the proxy's allow-list."""

from __future__ import annotations

import ctypes
import ctypes.util
import struct

import pytest

from orchestrator.safety.bubblewrap.net_proxy import host_allowed
from orchestrator.safety.bubblewrap.seccomp_filter import (
    ALLOW,
    ALLOWED,
    ARCHES,
    EAFNOSUPPORT,
    ENOSYS,
    EPERM,
    KNOWN_UP_TO,
    MOUNT_CALLS,
    NESTING,
    PERSONALITIES,
    REFUSED,
    SOCKET_FAMILIES,
    UNSUPPORTED,
    filter_program,
)
from orchestrator.safety.bubblewrap.syscall_numbers import SYSCALLS

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_ALG, AF_VSOCK = 1, 2, 10, 16, 17, 38, 40
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWTIME, SIGCHLD = 0x10000000, 0x00020000, 0x80, 17
FORK_FLAGS = 0x01200000 | SIGCHLD  # CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD: glibc's fork()
THREAD_FLAGS = 0x003D0F00  # pthread_create's clone flags
ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC = 0x0040000, 0x0400000
BY_ARGUMENT = ("socket", "personality", "clone", "unshare")
ALL_ALLOWED = {name for group in ALLOWED.values() for name in group}
ALL_REFUSED = {name for group in REFUSED.values() for name in group}


def run(program: bytes, arch: int, nr: int, *args: int) -> int:
    """What the kernel would answer: the program run on struct seccomp_data (no JIT, same rules)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    rules = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = (int(field) for field in rules[pc])
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            accumulator = int(struct.unpack_from("=I", data, k)[0])
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        elif code in (0x15, 0x25, 0x35, 0x45):  # JEQ, JGT, JGE, JSET with a constant
            taken = {0x15: accumulator == k, 0x25: accumulator > k, 0x35: accumulator >= k,
                     0x45: bool(accumulator & k)}[code]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected instruction {code:#x} at {pc}")
        pc += 1


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_the_filter_lets_its_list_through_and_refuses_every_other_call(arch: str) -> None:
    program, audit, nr = filter_program(arch), ARCHES[arch].audit, SYSCALLS[arch]
    allowed = {nr[name] for name in ALL_ALLOWED if name in nr}
    special = {nr[name] for name in (*BY_ARGUMENT, *UNSUPPORTED, "clone3")}
    for number in range(KNOWN_UP_TO + 1):  # every number, named here or not: the list or EPERM
        if number not in special:
            assert run(program, audit, number) == (ALLOW if number in allowed else EPERM), number
    for name in ALL_REFUSED & set(nr):
        assert run(program, audit, nr[name]) == EPERM, name
    for name in (*UNSUPPORTED, "clone3"):
        assert run(program, audit, nr[name]) == ENOSYS, name
    for number in (KNOWN_UP_TO + 1, 462, 1000, 0x3FFFFFFF):  # newer than the list: the C library falls back
        assert run(program, audit, number) == ENOSYS, number
    assert run(program, 0x40000003, 102) == EPERM  # i386's socketcall: another machine's calls
    if ARCHES[arch].x32:
        assert run(program, audit, 0x40000000 | nr["socket"], AF_UNIX) == EPERM
        assert run(program, audit, 0x40000000 | nr["read"]) == EPERM


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_the_argument_rules_socket_families_clone_flags_and_personalities(arch: str) -> None:
    program, audit, nr = filter_program(arch), ARCHES[arch].audit, SYSCALLS[arch]
    assert run(program, audit, nr["socket"], AF_UNIX, 1) == EPERM
    for family in (AF_VSOCK, AF_PACKET, AF_ALG, 0x100000000 | AF_VSOCK):
        assert run(program, audit, nr["socket"], family, 1) == EAFNOSUPPORT, family
    for family in (AF_INET, AF_INET6, AF_NETLINK):
        assert run(program, audit, nr["socket"], family, 1) == ALLOW, family
    assert SOCKET_FAMILIES == (AF_INET, AF_INET6, AF_NETLINK)
    for flags in (CLONE_NEWUSER, CLONE_NEWNS | SIGCHLD, CLONE_NEWUSER | CLONE_NEWNS):
        assert run(program, audit, nr["clone"], flags) == EPERM
        assert run(program, audit, nr["unshare"], flags) == EPERM
    assert run(program, audit, nr["unshare"], CLONE_NEWTIME) == EPERM
    for flags in (FORK_FLAGS, THREAD_FLAGS):
        assert run(program, audit, nr["clone"], flags) == ALLOW
    assert run(program, audit, nr["unshare"], 0x00000400) == ALLOW  # CLONE_FILES: nothing new
    for persona in PERSONALITIES:
        assert run(program, audit, nr["personality"], persona) == ALLOW, persona
    for persona in (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE | 0x8):
        assert run(program, audit, nr["personality"], persona) == EPERM, persona


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_a_nesting_sandbox_may_make_namespaces_and_mounts_but_nothing_else_changes(arch: str) -> None:
    program, audit, nr = filter_program(arch, namespaces=True), ARCHES[arch].audit, SYSCALLS[arch]
    plain = filter_program(arch)
    for name in (*MOUNT_CALLS, "setns", "chroot", "clone3"):
        assert run(program, audit, nr[name]) == ALLOW, name
    assert run(program, audit, nr["clone"], CLONE_NEWUSER | CLONE_NEWNS) == ALLOW
    assert run(program, audit, nr["unshare"], CLONE_NEWUSER) == ALLOW
    nesting = {nr[name] for name in (*NESTING, "clone", "unshare")}
    for number in range(KNOWN_UP_TO + 30):
        if number not in nesting and number != nr["socket"] and number != nr["personality"]:
            assert run(program, audit, number) == run(plain, audit, number), number
    assert run(program, audit, nr["socket"], AF_VSOCK) == EAFNOSUPPORT
    assert run(program, audit, nr["socket"], AF_UNIX) == EPERM
    assert run(program, audit, nr["personality"], ADDR_NO_RANDOMIZE) == EPERM


def test_the_lists_do_not_overlap_and_name_only_known_calls() -> None:
    assert not ALL_ALLOWED & ALL_REFUSED
    assert not ALL_ALLOWED & {*BY_ARGUMENT, *UNSUPPORTED, "clone3"}
    for group in ALLOWED.values():
        assert len(set(group)) == len(group)
    for name in ALL_ALLOWED | ALL_REFUSED:
        assert any(name in numbers for numbers in SYSCALLS.values()), name
    assert max(max(numbers.values()) for numbers in SYSCALLS.values()) == KNOWN_UP_TO


def _libseccomp() -> ctypes.CDLL | None:
    found = ctypes.util.find_library("seccomp")
    return ctypes.CDLL(found) if found else None


@pytest.mark.skipif(_libseccomp() is None, reason="libseccomp is not installed (Debian: libseccomp2)")
@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_the_call_numbers_are_libseccomps(arch: str) -> None:
    library = _libseccomp()
    assert library is not None
    resolve = library.seccomp_syscall_resolve_name_arch
    resolve.argtypes, resolve.restype = [ctypes.c_uint32, ctypes.c_char_p], ctypes.c_int
    def known(name: str, machine: str) -> bool:
        return bool(resolve(ARCHES[machine].audit, name.encode()) >= 0)

    newer = {name for name in ALL_ALLOWED | ALL_REFUSED if not any(known(name, other) for other in ARCHES)}
    assert all(SYSCALLS[arch].get(name, 0) > 448 for name in newer)  # a library older than Linux 6.6
    for name, number in SYSCALLS[arch].items():
        if name not in newer:
            assert resolve(ARCHES[arch].audit, name.encode()) == number, name
    for name in (ALL_ALLOWED | ALL_REFUSED) - newer:  # one a machine lacks (`open` on aarch64) is left out there
        assert (name in SYSCALLS[arch]) == known(name, arch), name


def test_the_allow_list_matches_names_exactly_or_subdomains_of_a_wildcard() -> None:
    listed = ["pypi.org", "*.pythonhosted.org", "127.0.0.1"]
    assert host_allowed("pypi.org", listed) and host_allowed("PyPI.org.", listed)
    assert host_allowed("files.pythonhosted.org", listed) and host_allowed("127.0.0.1", listed)
    assert not host_allowed("pythonhosted.org", listed)  # the wildcard is for subdomains
    assert not host_allowed("evilpypi.org", listed) and not host_allowed("pypi.org.evil.com", listed)
    assert not host_allowed("localhost", listed) and not host_allowed("127.0.0.2", listed)

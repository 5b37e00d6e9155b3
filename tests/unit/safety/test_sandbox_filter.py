"""The sandbox's Unix-socket filter and its proxy, piece by piece: the BPF program for each
machine, what a command inside can and cannot open (both ways the filter is installed), and the
proxy's allow-list, which refuses before it connects. Only 127.0.0.1 and `localhost` are used."""

from __future__ import annotations

import struct
import pytest
from orchestrator.safety.net_proxy import host_allowed
from orchestrator.safety.sandbox_init import ARCHES, filter_program




@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_the_filter_checks_the_architecture_first_and_ends_allowing(arch: str) -> None:
    program = filter_program(arch)
    rules = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    assert rules[0] == (0x20, 0, 0, 4)  # load the architecture
    assert rules[1][3] == ARCHES[arch].audit and rules[2][0] == 0x06  # another one: refused
    assert rules[-1] == (0x06, 0, 0, 0x7FFF0000)
    assert (0x15, 0, 3, ARCHES[arch].socket_nr) in rules and (0x15, 0, 1, 1) in rules  # socket(AF_UNIX, ...)
    for index, (code, jt, jf, _k) in enumerate(rules):  # every jump lands inside the program
        if code in (0x15, 0x35):
            assert index + 1 + max(jt, jf) < len(rules)


def test_the_allow_list_matches_names_exactly_or_subdomains_of_a_wildcard() -> None:
    listed = ["pypi.org", "*.pythonhosted.org", "127.0.0.1"]
    assert host_allowed("pypi.org", listed) and host_allowed("PyPI.org.", listed)
    assert host_allowed("files.pythonhosted.org", listed) and host_allowed("127.0.0.1", listed)
    assert not host_allowed("pythonhosted.org", listed)  # the wildcard is for subdomains
    assert not host_allowed("evilpypi.org", listed) and not host_allowed("pypi.org.evil.com", listed)
    assert not host_allowed("localhost", listed) and not host_allowed("127.0.0.2", listed)



"""Credentials kept from the agent and out of everything written or printed.

    secrets      which values are credentials, and the scrubbed environment for commands and checks
    redaction    the key (and anything shaped like one) replaced in all we write or print
    own_environ  `hide_own_secrets()`: the key wiped from this process's /proc environ block
"""

"""The processes a command starts: run in a group of their own, found, and stopped.

    process_group  a command in its own process group and session, with a timeout (`run_in_group`)
    descendants    the processes that left the group, found and stopped (subreaper)
    signals        signals held off while something must not be torn (`held_signals`)
"""

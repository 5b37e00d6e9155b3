"""The command line: the app and its options, the commands' wiring, errors as exit codes, the entry point."""

"""The command line: the typer app and its shared options (`app`), how it presents itself
(`presentation`), the building commands (`commands`: run, validate, plan, demo), the commands on a
project's records (`project_commands`), and the console entry point (`entry`).

May import everything below it (`commands`, `config`, `store`, `safety`, ...); nothing imports it.
"""

"""The words of a check command, as the shell splits them, and the paths they may name: the one
tokenizer and the one "is this a path here" helper behind every reading of a check command
(`check_paths`: the files it names and protects; `check_reach` and `influence_snapshot`: where
its pytest looks; `pytest_command`: whether it is a plain pytest run).

A check command is whatever the spec says: a `python3 -c "<a long script>"`, a here-document,
unbalanced quotes, a NUL, a word longer than any file name. Nothing here raises on any of it:
a word that cannot be a path on this file system names nothing (`path_here` is None), and a
question asked of the disk about a path (`is_dir`, `is_file`) is answered False when the disk
cannot answer it.

Shell operators (`&&`, `|`, `;`, `(`, `)`, `>`, `2>&1`'s `>&`, ...) come out as tokens of their
own, whether or not spaces surround them (`cd tests&&pytest`), so a reader can tell a file a
command writes (`> out.txt`) or changes into (`cd src`) from one it runs.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

_OPERATOR_CHARS = "();<>|&"
_OPERATORS = re.compile(r"(&&|\|\||[;|&()<>]+)")
# Linux's limits: a path of PATH_MAX bytes or more, or a name over NAME_MAX, makes every
# system call on it fail with ENAMETOOLONG (which pathlib's `is_dir` raises rather than answers).
_NAME_MAX = 255
_PATH_MAX = 4096


def shell_words(command: str) -> list[str]:
    """The command's words and operators, comments left out; quotes are removed as the shell would.

    Unbalanced quotes do not stop the reading: the command's blank-separated words are taken
    instead, still split at operators (the words are still worth a look)."""
    words = strict_shell_words(command)
    if words is None:
        return [token for word in command.split() for token in _OPERATORS.split(word) if token]
    return words


def strict_shell_words(command: str) -> list[str] | None:
    """As `shell_words`, but None when the shell could not read the command (unbalanced quotes)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def plain_words(command: str) -> list[str]:
    """The command's words without its operators (`cd tests&&pytest` gives cd, tests, pytest)."""
    return [word for word in shell_words(command) if not is_operator(word)]


def is_operator(token: str) -> bool:
    """Whether `token` (from `shell_words`) is a shell operator rather than a word."""
    return bool(token) and all(char in _OPERATOR_CHARS for char in token)


def is_output_redirect(token: str) -> bool:
    """`>`, `>>`, `&>`, `>&`: the next word is a file the command writes (or a descriptor), not one it reads."""
    return is_operator(token) and ">" in token


def can_name_a_path(word: str) -> bool:
    """Whether `word` could name a file here at all: not empty, no NUL, encodable for the file
    system, each name and the whole within Linux's limits. A `-c` script is not a path."""
    if not word or "\0" in word:
        return False
    try:
        encoded = os.fsencode(word)
    except (UnicodeError, ValueError):  # a lone surrogate
        return False
    return len(encoded) < _PATH_MAX and all(len(name) <= _NAME_MAX for name in encoded.split(b"/"))


def path_here(root: Path, word: str) -> Path | None:
    """The path inside `root` (not `root` itself) that `word` names as written, relative to the
    root or absolute, `..` folded without following links; None when the word names no such path
    (it cannot be a path, it is a variable or `~`, it leads outside). Never touches the disk."""
    if not can_name_a_path(word) or word.startswith(("$", "~")):
        return None
    joined = os.path.normpath(os.path.join(root, word))
    if not can_name_a_path(joined):
        return None
    path = Path(joined)
    return path if path != root and path.is_relative_to(root) else None


def is_dir(path: Path | str) -> bool:
    """Whether `path` is a directory (links followed); False when the disk cannot say."""
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


def is_file(path: Path | str) -> bool:
    """Whether `path` is a regular file (links followed); False when the disk cannot say."""
    try:
        return os.path.isfile(path)
    except (OSError, ValueError):
        return False

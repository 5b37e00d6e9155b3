"""The words of a check command, as the shell splits them: the one tokenizer behind every
reading of a check command (`check_paths`: the files it names; `influence_snapshot`: where
its pytest looks).

Shell operators (`&&`, `|`, `;`, `(`, `)`, `>`, `2>&1`'s `>&`, ...) come out as tokens of their
own, whether or not spaces surround them (`cd tests&&pytest`), so a reader can tell a file a
command writes (`> out.txt`) or changes into (`cd src`) from one it runs.
"""

from __future__ import annotations

import re
import shlex

_OPERATOR_CHARS = "();<>|&"
_OPERATORS = re.compile(r"(&&|\|\||[;|&()<>]+)")


def shell_words(command: str) -> list[str]:
    """The command's words and operators, comments left out; quotes are removed as the shell would."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the words are still worth a look
        return [token for word in command.split() for token in _OPERATORS.split(word) if token]


def is_operator(token: str) -> bool:
    """Whether `token` (from `shell_words`) is a shell operator rather than a word."""
    return bool(token) and all(char in _OPERATOR_CHARS for char in token)


def is_output_redirect(token: str) -> bool:
    """`>`, `>>`, `&>`, `>&`: the next word is a file the command writes (or a descriptor), not one it reads."""
    return is_operator(token) and ">" in token

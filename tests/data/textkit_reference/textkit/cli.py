"""The command line: `python -m textkit COMMAND [TEXT]`; TEXT defaults to standard input."""

import argparse
import json
import sys

import textkit

CASES = {"snake": textkit.snake_case, "kebab": textkit.kebab_case, "camel": textkit.camel_case}


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status (usage errors exit 2 through argparse)."""
    parser = argparse.ArgumentParser(prog="textkit", description=__doc__)
    parser.add_argument("--version", action="version", version=f"textkit {textkit.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("slugify").add_argument("--separator", default="-")
    commands.add_parser("wrap").add_argument("--width", type=int, default=70)
    commands.add_parser("case").add_argument("style", choices=sorted(CASES))
    commands.add_parser("stats")
    truncate = commands.add_parser("truncate")
    truncate.add_argument("--length", type=int, required=True)
    truncate.add_argument("--ellipsis", default="...")
    truncate.add_argument("--whole-words", action="store_true")
    for command in commands.choices.values():
        command.add_argument("text", nargs="?")
    args = parser.parse_args(argv)
    text = args.text if args.text is not None else sys.stdin.read().rstrip("\n")
    try:
        if args.command == "slugify":
            out = textkit.slugify(text, args.separator)
        elif args.command == "wrap":
            out = textkit.fill(text, args.width)
        elif args.command == "case":
            out = CASES[args.style](text)
        elif args.command == "stats":
            out = json.dumps(textkit.text_stats(text))
        else:
            out = textkit.truncate(text, args.length, args.ellipsis, whole_words=args.whole_words)
    except ValueError as exc:
        parser.exit(2, f"textkit: error: {exc}\n")
    print(out)
    return 0

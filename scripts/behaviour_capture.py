"""Check that a refactoring changed no behaviour: capture what `orchestrate` sends and writes in a
set of end-to-end tests on an older commit and on this checkout, then diff the two after masking
times, ids, ports and temporary paths.

    python scripts/behaviour_capture.py compare REV TEST_FILE... [--out DIR] [-n N]

archives REV into DIR/tree (default DIR: /tmp/behaviour-capture), runs the TEST_FILEs there with
this virtualenv (PYTHONPATH=that tree, so its own packages and tests are imported) and then in this
checkout, one file at a time, and prints every captured file that differs (exit 1 if any). The
parts: `capture TREE OUT TEST_FILE...` runs one tree; `diff OUT_A OUT_B` masks and compares.

What is captured, per test (OUT/<test id>/), by this module loaded as a pytest plugin
(`-p behaviour_capture` with scripts/ on PYTHONPATH and CAPTURE_DIR set; `capture` does that):
- requests.jsonl: every request the fake Messages API received (method, path, provider, the
  headers that are not per-connection, the body), in arrival order;
- callNN/: each `tests.cli_helpers.run_cli` call's argv, exit code, stdout, stderr and the text
  files under the project's `.autonomous/` after it.
CLI runs a test starts itself (`subprocess.Popen(orchestrate_command(...))`, the kill and signal
tests) have their requests captured but not their output; their timing makes them noisy anyway.
Compare a tree with itself once to see the noise (concurrent `--jobs` runs reorder requests:
`diff` says "order only" when the sorted lines agree).
"""

from __future__ import annotations

import difflib
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_DROPPED_HEADERS = {"host", "content-length", "idempotency-key", "x-stainless-timeout", "connection",
                    "accept-encoding", "x-stainless-read-timeout"}
_state: dict[str, Any] = {"test": "none", "calls": {}}


# -- the pytest plugin ---------------------------------------------------------------------------

def _out() -> Path:
    return Path(os.environ["CAPTURE_DIR"]) / str(_state["test"])


def pytest_runtest_setup(item: Any) -> None:
    _state["test"] = re.sub(r"[^A-Za-z0-9_.-]", "_", item.nodeid)


def pytest_configure(config: Any) -> None:
    if "CAPTURE_DIR" not in os.environ:
        return
    _patch_ledger()
    _patch_run_cli()


def _patch_ledger() -> None:
    # The fake's ledger, wherever the tree under test keeps it (its server imports it in both; a
    # guessed module path could resolve into another checkout through an editable install).
    from fake_messages_api import server
    ledger_class = vars(server)["Ledger"]
    record = ledger_class.record

    def capturing_record(self: Any, **fields: Any) -> Any:
        headers = {k.lower(): v for k, v in dict(fields.get("headers") or {}).items()
                   if k.lower() not in _DROPPED_HEADERS}
        line = {"method": fields.get("method"), "path": fields.get("path"), "provider": fields.get("provider"),
                "headers": headers, "body": fields.get("body")}
        _out().mkdir(parents=True, exist_ok=True)
        with open(_out() / "requests.jsonl", "a") as fh:
            fh.write(json.dumps(line, sort_keys=True, default=str) + "\n")
        return record(self, **fields)

    ledger_class.record = capturing_record


def _patch_run_cli() -> None:
    import tests.cli_helpers as helpers
    run_cli = helpers.run_cli

    def capturing_run_cli(args: Any, cwd: Path, *rest: Any, **kwargs: Any) -> Any:
        result = run_cli(args, cwd, *rest, **kwargs)
        calls = _state["calls"]
        calls[_state["test"]] = number = calls.get(_state["test"], 0) + 1
        dest = _out() / f"call{number:02d}"
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "argv").write_text(json.dumps([str(a) for a in args]) + f"\nexit {result.code}\n")
        (dest / "stdout").write_text(result.stdout)
        (dest / "stderr").write_text(result.stderr)
        _copy_autonomous(Path(cwd) / ".autonomous", dest / "autonomous")
        return result

    helpers.run_cli = capturing_run_cli


def _copy_autonomous(source: Path, dest: Path) -> None:
    if not source.is_dir():
        return
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if not path.is_file() or path.is_symlink() or ".git" in rel.parts or path.stat().st_size > 1_000_000:
            continue
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


# -- capture, mask, compare ----------------------------------------------------------------------

def capture(tree: Path, out: Path, files: list[str], workers: str) -> None:
    """Run each test file in `tree` (its own packages and tests) with the plugin, into `out`."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "CAPTURE_DIR": str(out),
           "PYTHONPATH": os.pathsep.join([str(tree), str(_HERE)])}
    for name in files:
        print(f"[{tree}] {name}", flush=True)
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "behaviour_capture", "-n", workers, name],
                       cwd=tree, env=env, check=False)


_MASKS = [
    (r"/tmp/pytest-of-[^/]+/pytest-\d+/(popen-gw\d+/)?", "/tmp/P/"),
    (r"127\.0\.0\.1:\d+", "127.0.0.1:PORT"), (r"localhost:\d+", "localhost:PORT"),
    (r'"([A-Za-z_]*(At|_at|Ms|_ms|ts|time|Time|seconds|duration|Duration|pid))": ?-?[0-9.eE+-]+', r'"\1": 0'),
    (r'"([A-Za-z_]*(At|_at|timestamp|time|Time))": ?"[^"]*"', r'"\1": "T"'),
    (r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?", "DATETIME"),
    (r"\b(toolu|msg|req|srvtoolu)_[A-Za-z0-9]+", r"\1_X"), (r"\b[0-9a-f]{40}\b", "SHA"),
    (r"\b[0-9a-f]{7,12}\b", "sha"), (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "UUID"),
    (r"\b\d{13,}\b", "EPOCH"), (r"\d+(\.\d+)? ?(s|ms|seconds)\b", "N s"),
    (r"\bpid \d+", "pid N"), (r"\.tmp[A-Za-z0-9_]*\b", ".tmp"),
]


def mask(text: str, roots: list[str]) -> str:
    for root in roots:
        text = text.replace(root, "REPO")
    for pattern, replacement in _MASKS:
        text = re.sub(pattern, replacement, text)
    return text


def diff(a: Path, b: Path, roots: list[str]) -> int:
    """Print each captured file that differs after masking; the number of differences."""
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    differences = 0
    for rel in names:
        left, right = a / rel, b / rel
        if left.is_file() and right.is_file() and filecmp.cmp(left, right, shallow=False):
            continue
        if not (left.is_file() and right.is_file()):
            differences += 1
            print(f"ONLY IN {'A' if left.is_file() else 'B'}: {rel}")
            continue
        old = mask(left.read_text(errors="replace"), roots)
        new = mask(right.read_text(errors="replace"), roots)
        if old == new:
            continue
        differences += 1
        if sorted(old.splitlines()) == sorted(new.splitlines()):
            print(f"ORDER ONLY: {rel}")
            continue
        print(f"DIFFERS: {rel}")
        print("\n".join(_unified(old, new, str(rel))[:60]))
    print(f"{len(names)} files compared, {differences} differ")
    return differences


def _unified(old: str, new: str, name: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"A/{name}", f"B/{name}", lineterm="", n=1))


def main(argv: list[str]) -> int:
    command, *rest = argv
    workers = "0"
    if "-n" in rest:
        at = rest.index("-n")
        workers = rest[at + 1]
        del rest[at:at + 2]
    base = Path("/tmp/behaviour-capture")
    if "--out" in rest:
        at = rest.index("--out")
        base = Path(rest[at + 1])
        del rest[at:at + 2]
    here = Path.cwd().resolve()
    if command == "capture":
        capture(Path(rest[0]).resolve(), Path(rest[1]).resolve(), rest[2:], workers)
        return 0
    if command == "diff":
        return 1 if diff(Path(rest[0]), Path(rest[1]), [str(here), str(base / "tree")]) else 0
    if command == "compare":
        rev, files = rest[0], rest[1:]
        tree = base / "tree"
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", rev], cwd=here, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        capture(tree, base / "old", files, workers)
        capture(here, base / "new", files, workers)
        return 1 if diff(base / "old", base / "new", [str(here), str(tree)]) else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

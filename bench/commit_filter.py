"""What the checkpoint's path filter and the hidden-files look cost, per passed feature.

In a git project of F files (default 2,000 and 20,000, 20 directories, with an ignored `build/`
of 200 files and a `.autonomous/` of 50 files let through by a `.gitignore` negation), prints
the median over R rounds (default 7) of:
- a whole checkpoint (`commit_checkpoint`: five files changed), which now runs the filter;
- the filter alone (`drop_refused` on an index holding those five changes and the state);
- the hidden-files look a passed check now costs (`hidden_by_new_rules`).

    python3 bench/commit_filter.py [--files 2000 20000] [--rounds 7]

Leaves out: the model, the check itself, a cold page cache, and `--jobs` (its worker commit and
merge checkpoint run the same filter once each).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchestrator.git.checkpoint import commit_checkpoint  # noqa: E402
from orchestrator.git.commit_filter import drop_refused  # noqa: E402
from orchestrator.git.run_git import safe_config  # noqa: E402
from orchestrator.run.checks.protection.hidden_files import hidden_by_new_rules  # noqa: E402


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(root: Path, files: int) -> None:
    _git(root, "init", "-q")
    _git(root, "config", "user.name", "bench")
    _git(root, "config", "user.email", "bench@localhost")
    for index in range(files):
        path = root / f"pkg{index % 20}" / f"m{index}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"VALUE = {index}\n")
    (root / ".gitignore").write_text("build/\n!.autonomous/\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "start")
    (root / "build").mkdir()
    for index in range(200):
        (root / "build" / f"o{index}.txt").write_text("x\n")
    (root / ".autonomous" / "logs").mkdir(parents=True)
    for index in range(50):
        (root / ".autonomous" / "logs" / f"f{index}.json").write_text("{}\n")


def _change(root: Path, round_: int) -> None:
    for index in range(5):
        (root / f"pkg{index}" / f"m{index}.py").write_text(f"VALUE = {round_}\n")


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f} ms"


def measure(files: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _project(root, files)
        safe = safe_config(root)
        checkpoint, filtered, hidden = [], [], []
        for round_ in range(rounds):
            _change(root, round_)
            started = time.perf_counter()
            hidden_by_new_rules(root, ["HEAD"])
            hidden.append(time.perf_counter() - started)
            _git(root, "add", "--all", "--", ".")
            started = time.perf_counter()
            drop_refused(root, "HEAD", safe)
            filtered.append(time.perf_counter() - started)
            _git(root, "reset", "-q")
            started = time.perf_counter()
            commit_checkpoint(root, f"orchestrate: f{round_}: bench")
            checkpoint.append(time.perf_counter() - started)
        print(f"{files:>6} files: checkpoint {_median_ms(checkpoint)}, of which the filter {_median_ms(filtered)}; "
              f"hidden-files look {_median_ms(hidden)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for files in args.files:
        measure(files, args.rounds)


if __name__ == "__main__":
    main()

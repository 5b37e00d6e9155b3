"""The user's edits in the checkout survive a fast-forward that changes the same files
(`orchestrator.merge.user_edits`): an edit, a new file, a deletion."""

from __future__ import annotations

from pathlib import Path

from orchestrator.merge.user_edits import edits_in_the_way, put_back, set_aside
from tests.git_helpers import git, init_repo


def test_an_edit_a_new_file_and_a_deletion_are_kept_across_the_fast_forward(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "p", {"a.txt": "a\n", "gone.txt": "g\n", "other.txt": "o\n"})
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-b", "feature")
    for name, text in {"a.txt": "feature\n", "gone.txt": "feature\n", "new.txt": "feature\n"}.items():
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "feature")
    sha = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    (root / "a.txt").write_text("mine\n")
    (root / "new.txt").write_text("mine too\n")
    (root / "gone.txt").unlink()
    (root / "other.txt").write_text("untouched by the merge\n")

    paths = edits_in_the_way(root, [], base, sha)
    assert paths == ["a.txt", "gone.txt", "new.txt"]
    kept = set_aside(root, [], base, paths, root / ".autonomous", sha)
    git(root, "merge", "--ff-only", "-q", sha)
    put_back(root, kept)

    assert git(root, "rev-parse", "HEAD") == sha
    assert (root / "a.txt").read_text() == "mine\n" and (root / "new.txt").read_text() == "mine too\n"
    assert not (root / "gone.txt").exists()
    assert (root / "other.txt").read_text() == "untouched by the merge\n"
    assert (kept.copies / "a.txt").read_text() == "mine\n"

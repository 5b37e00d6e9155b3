"""A shard's artifact: the directory `orchestrate export DIR` writes and `orchestrate combine` reads.

    DIR/manifest.json              what this is: branch, head commit, run id, spec, statuses
    DIR/branch.bundle              the branch as a git bundle (absent when there is no branch)
    DIR/autonomous/state/execution-state.json   the run state (journal folded in, spend included)
    DIR/autonomous/logs/<id>.json               the feature logs
    DIR/autonomous/context/*                    the Context Agent's stores and pending reports

Left out: events, backups, worktrees, the lock and working memory (bulky, and nothing the
combined project needs to resume). Every text is redacted again on the way out.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import Field, ValidationError

from orchestrator.errors import UsageError
from orchestrator.run.checkpoint import is_git_repo
from orchestrator.run.git_safety import CheckpointError, check_git, run_git
from orchestrator.safety.secrets import redact
from orchestrator.spec.fields import is_safe_id
from orchestrator.store.atomic import write_text_atomic
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.run_state import CamelModel, RunState, now_ms
from orchestrator.store.state import StateStore

FORMAT = "orchestrate-artifact"
MANIFEST = "manifest.json"
BUNDLE = "branch.bundle"
RECORDS = "autonomous"


class Manifest(CamelModel):
    format: str = FORMAT
    version: int = 1
    branch: str | None = None
    head: str | None = None  # the branch's commit when exported
    run_id: str = ""
    spec: str = ""
    spec_hash: str = ""
    statuses: dict[str, str] = Field(default_factory=dict)
    created_at: int = 0


def export_artifact(paths: ProjectPaths, directory: Path, branch: str | None) -> Manifest:
    """Write the artifact of this project's run into `directory`; returns its manifest."""
    state = StateStore(paths).load()
    if state is None:
        raise UsageError(f"no run state in {paths.autonomous} to export (run `orchestrate run SPEC` first)")
    directory.mkdir(parents=True, exist_ok=True)
    head = _bundle_branch(paths.root, branch, directory / BUNDLE) if branch else None
    clear_directory_records(directory)  # a re-export replaces the records whole
    records = directory / RECORDS
    _write(records / "state" / "execution-state.json", state.model_dump_json(by_alias=True, indent=2) + "\n")
    for source in sorted(paths.logs_dir.glob("*.json")):
        if is_safe_id(source.stem):
            _copy_text(source, records / "logs" / source.name)
    for source in sorted(paths.context_dir.glob("*.json*")):
        _copy_text(source, records / "context" / source.name)
    manifest = Manifest(
        branch=branch if head else None, head=head, run_id=state.run_id, spec=state.spec_path,
        spec_hash=state.spec_hash, statuses={fid: entry.status for fid, entry in state.features.items()},
        created_at=now_ms(),
    )
    _write(directory / MANIFEST, manifest.model_dump_json(by_alias=True, indent=2) + "\n")
    return manifest


def _bundle_branch(root: Path, branch: str, target: Path) -> str | None:
    """Bundle `branch` (whole history: the combining clone needs nothing else); its head, or None."""
    if not is_git_repo(root):
        return None
    ref = f"refs/heads/{branch}"
    found = run_git(root, "rev-parse", "--verify", "--quiet", ref + "^{commit}")
    if found.returncode != 0:
        return None
    target.unlink(missing_ok=True)
    try:
        check_git(root, "bundle", "create", str(target), ref)
    except CheckpointError as err:
        raise UsageError(f"could not bundle branch {branch}: {err}") from err
    return found.stdout.strip()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, redact(text))


def _copy_text(source: Path, target: Path) -> None:
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return  # a damaged record stays behind; the state says what it held
    _write(target, text)


class Artifact:
    """One shard's artifact, read back: its manifest, state and where its records are."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            self.manifest = Manifest.model_validate_json((directory / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValidationError, UnicodeDecodeError) as err:
            raise UsageError(
                f"{directory} is not an orchestrate artifact ({MANIFEST}: {_first_line(err)}); "
                "make one with `orchestrate export DIR` in the shard's project"
            ) from err
        if self.manifest.format != FORMAT:
            raise UsageError(f"{directory / MANIFEST}: format {self.manifest.format!r} is not {FORMAT!r}")
        self.records = directory / RECORDS
        self.state = self._load_state()

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def bundle(self) -> Path | None:
        path = self.directory / BUNDLE
        return path if self.manifest.head and path.is_file() else None

    def log(self, feature_id: str) -> Path:
        return self.records / "logs" / f"{feature_id}.json"

    @property
    def context_dir(self) -> Path:
        return self.records / "context"

    def _load_state(self) -> RunState:
        path = self.records / "state" / "execution-state.json"
        try:
            return RunState.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, UnicodeDecodeError) as err:
            raise UsageError(f"{path}: not a readable run state ({_first_line(err)})") from err


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0][:200] if lines else type(err).__name__


def clear_directory_records(directory: Path) -> None:
    """Remove an earlier export's records from `directory` (a re-export replaces them whole)."""
    shutil.rmtree(directory / RECORDS, ignore_errors=True)


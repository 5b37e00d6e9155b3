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
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field, ValidationError

from orchestrator.combine.untrusted import (
    MAX_LOG_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_RECORD_BYTES,
    MAX_STATE_BYTES,
    UNBOUNDED,
    UnsafeArtifact,
    bad_numbers,
    inspect_tree,
    read_bounded,
)
from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError, check_git, run_git
from orchestrator.safety.credentials.redaction import redact
from orchestrator.spec.fields import is_safe_id
from orchestrator.store.disk.atomic import write_text_atomic
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.records import CamelModel
from orchestrator.store.run_state import RunState, now_ms
from orchestrator.store.state import StateStore
from orchestrator.user_errors import UsageError

FORMAT = "orchestrate-artifact"
MANIFEST = "manifest.json"
BUNDLE = "branch.bundle"
RECORDS = "autonomous"
STATE_FILE = Path("state") / "execution-state.json"


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
    _write(records / STATE_FILE, state.model_dump_json(by_alias=True, indent=2) + "\n")
    for source in sorted(paths.logs_dir.glob("*.json")):
        if is_safe_id(source.stem):
            _copy_text(source, records / "logs" / source.name)
    for source in sorted(paths.context.directory.glob("*.json*")):
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
    """One shard's artifact, read back: its manifest, state and where its records are.

    Untrusted input (`untrusted`): the whole directory is inspected before anything is read
    (no links, no special files, sizes bounded); a forged spend is refused. Each refusal is a
    usage error naming the file (exit 2)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        if not directory.is_dir():
            raise UsageError(f"{directory} is not a directory; give the directory `orchestrate export DIR` wrote")
        inspect_tree(directory, _bound_of)
        try:
            raw = read_bounded(directory / MANIFEST, MAX_MANIFEST_BYTES)
            self.manifest = Manifest.model_validate_json(raw)
        except (OSError, ValidationError) as err:
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
        return path if self.manifest.head and path.is_file() and not path.is_symlink() else None

    def log(self, feature_id: str) -> Path:
        return self.records / "logs" / f"{feature_id}.json"

    def read_log(self, feature_id: str) -> bytes:
        """The bytes of `feature_id`'s log, never through a link (`UnsafeArtifact`); `OSError` if absent."""
        return read_bounded(self.log(feature_id), MAX_LOG_BYTES)

    @property
    def context_dir(self) -> Path:
        return self.records / "context"

    def _load_state(self) -> RunState:
        path = self.records / STATE_FILE
        try:
            state = RunState.model_validate_json(read_bounded(path, MAX_STATE_BYTES))
        except (OSError, ValidationError) as err:
            raise UsageError(f"{path}: not a readable run state ({_first_line(err)})") from err
        forged = bad_numbers(state.totals.model_dump(by_alias=True), "totals") + [
            found for fid, entry in state.features.items()
            for found in bad_numbers({"costUsd": entry.cost_usd, "tokens": entry.tokens.model_dump(by_alias=True)},
                                     f"features.{fid}")
        ]
        if forged:
            raise UnsafeArtifact(f"{path}: a spend is never negative, yet {forged[0]}; the artifact is refused "
                                 "(the recorded spend must never fall below what the shards spent)")
        return state


def _bound_of(relative: Path) -> int:
    """How large the file at `relative` (within an artifact) may be."""
    if relative == Path(MANIFEST):
        return MAX_MANIFEST_BYTES
    if relative == Path(BUNDLE):
        return UNBOUNDED
    if relative == Path(RECORDS) / STATE_FILE:
        return MAX_STATE_BYTES
    if relative.parent == Path(RECORDS) / "logs":
        return MAX_LOG_BYTES
    return MAX_RECORD_BYTES


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0][:200] if lines else type(err).__name__


def clear_directory_records(directory: Path) -> None:
    """Remove an earlier export's records from `directory` (a re-export replaces them whole)."""
    shutil.rmtree(directory / RECORDS, ignore_errors=True)



def check_artifact_set(artifacts: Sequence[Artifact], spec_sha256: str, spec_name: str) -> None:
    """Refuse artifacts that cannot be combined with this spec: one made from another spec
    (its features would be matched by id alone), or two carrying the same run id (a copy, or a
    forgery whose totals would replace the first's)."""
    seen: dict[str, Artifact] = {}
    for artifact in artifacts:
        other = next((h for h in (artifact.manifest.spec_hash, artifact.state.spec_hash) if h != spec_sha256), None)
        if other is not None:
            raise UnsafeArtifact(
                f"{artifact.directory}: made from another spec than {spec_name} (its spec's sha256 "
                f"{other[:12] or 'is missing'}, this one's {spec_sha256[:12]}); combine the "
                "artifacts of shards that ran this very spec"
            )
        if artifact.manifest.run_id != artifact.state.run_id:
            raise UnsafeArtifact(f"{artifact.directory}: its manifest and its state name different runs; "
                                 "re-export it with `orchestrate export`")
        earlier = seen.setdefault(artifact.state.run_id, artifact)
        if earlier is not artifact:
            raise UnsafeArtifact(
                f"{artifact.directory} and {earlier.directory} carry the same run id "
                f"{artifact.state.run_id}: give each shard's artifact once"
            )

"""Loading the feature spec, with clear errors: the one entry point for spec files.

Two formats are read (see docs/spec.md):
- native: `{"project": ..., "verify": ..., "features": [{"id": ..., ...}]}`;
- quickstart: the bare array of the Anthropic autonomous-coding quickstart's
  `feature_list.json`, translated to native features by `quickstart`.

The models live in `models` and are re-exported here and by the package: import from
`orchestrator.spec`.
`load_spec` reports every problem in the file at once, each with its location, and never
raises anything but `SpecError`, whatever the bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import ValidationError

from orchestrator.spec.decode import decode_json, unknown_keys
from orchestrator.spec.feature_spec import GRAPH_CHECKED, Feature, FeatureSpec, SpecSettings
from orchestrator.spec.fields import MAX_FEATURES, MAX_SPEC_BYTES
from orchestrator.spec.graph import check_features
from orchestrator.spec.quickstart import QuickstartEntry, to_native
from orchestrator.spec.spec_errors import SpecError, SpecFileMissing, describe, located, translate

SourceFormat = Literal["native", "quickstart"]

# Enough to act on; a crafted file with a million unknown keys must not flood the terminal.
MAX_WARNINGS = 100

_Problems = list[tuple[int, str]]  # (feature index or -1 for the top level, located text)


class _Read(NamedTuple):
    """What a format reader hands on: settings and raw features, still to be checked."""

    settings: dict[str, object]
    raw_features: list[Any]
    problems: _Problems
    warnings: list[str]


@dataclass(frozen=True)
class ParsedSpec:
    """A valid spec parsed from bytes, with what is worth telling the user about it."""

    spec: FeatureSpec
    sha256: str
    """Of the raw bytes, to notice that the spec file changed between runs."""
    warnings: list[str]
    source_format: SourceFormat


@dataclass(frozen=True)
class LoadedSpec(ParsedSpec):
    """A valid spec loaded from a file."""

    path: Path


def load_spec(path: str | Path) -> LoadedSpec:
    """Read and validate the spec file at `path`. Raises `SpecError` listing every problem."""
    path = Path(path)
    source = str(path)
    try:
        if path.is_dir():
            raise SpecError(["this is a directory; give the path of a spec file"], source=source)
        with open(path, "rb") as handle:
            # One byte over the cap is enough to know it is too big, without reading it all.
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise SpecFileMissing(source) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SpecError([f"cannot read the file: {reason}"], source=source) from None
    parsed = parse_spec(raw, source=source, default_project=path.stem)
    return LoadedSpec(
        spec=parsed.spec,
        sha256=parsed.sha256,
        warnings=parsed.warnings,
        source_format=parsed.source_format,
        path=path,
    )


def parse_spec(
    raw: bytes, *, source: str = "<spec>", default_project: str = "project"
) -> ParsedSpec:
    """Validate a spec from its bytes. Pure: reads no file. Raises `SpecError`."""
    data = decode_json(raw, source)
    default_project = _usable_name(default_project)
    source_format: SourceFormat
    if isinstance(data, list):
        source_format = "quickstart"
        settings, raw_features, problems, warnings = _read_quickstart(data, default_project)
    elif isinstance(data, dict):
        source_format = "native"
        settings, raw_features, problems, warnings = _read_native(data, default_project)
    else:
        raise SpecError(
            ['the top level must be an object with a "features" list, or an array of features'
             f" (quickstart feature_list.json); got {describe(data)}"],
            source=source,
        )

    features: list[Feature] = []
    for i, item in enumerate(raw_features):
        try:
            features.append(Feature.model_validate(item))
        except ValidationError as exc:
            problems += [(i, text) for text in translate(exc, f"features[{i}]")]
    if source_format == "native":
        problems += check_features(raw_features)
    warnings = _bounded(warnings)
    if problems:
        problems.sort(key=lambda problem: problem[0])  # stable: file order within a feature
        raise SpecError([text for _, text in problems], source=source, warnings=warnings)

    try:
        spec = FeatureSpec.model_validate(
            {**settings, "features": features}, context={GRAPH_CHECKED: True}
        )
    except ValidationError as exc:  # not expected: everything was checked above
        raise SpecError(translate(exc), source=source, warnings=warnings) from None
    unchecked = sum(1 for feature in spec.features if spec.check_command(feature) is None)
    if unchecked:
        warnings.append(_unchecked_warning(unchecked, len(spec.features), source_format, source))
    return ParsedSpec(spec, hashlib.sha256(raw).hexdigest(), warnings, source_format)


def _unchecked_warning(unchecked: int, total: int, source_format: SourceFormat, source: str) -> str:
    """Features without a check are decided by the agent's own report: say so, and how to get checks."""
    said = (f"no verify command for {unchecked} of {total} features (none of their own, none at the top"
            " level): the agent's own report will decide whether they pass")
    if source_format == "quickstart":
        return (f"{said}; `orchestrate plan --from {source}` keeps these features and writes a check for"
                " each, seen failing first, so each is held to its check")
    return f"{said}; give each a `verify` command, or a top-level one"


def dump_spec(spec: FeatureSpec) -> str:
    """The spec as native JSON text that `parse_spec` reads back to an equal spec."""
    return json.dumps(spec.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def _read_native(data: dict[str, object], default_project: str) -> _Read:
    """Top-level settings checked, and the raw feature objects still to check."""
    warnings = unknown_keys(data, FeatureSpec.model_fields, "")
    problems: _Problems = []
    settings = {key: value for key, value in data.items() if key in SpecSettings.model_fields}
    settings.setdefault("project", default_project)
    try:
        SpecSettings.model_validate(settings)
    except ValidationError as exc:
        problems += [(-1, text) for text in translate(exc)]
    if "features" not in data:
        problems.append((-1, 'features: required field is missing (add a "features" list)'))
        return _Read(settings, [], problems, warnings)
    raw_features, more = _feature_list(data["features"], "features")
    for i, item in enumerate(raw_features):
        suggest = len(warnings) < MAX_WARNINGS
        warnings += unknown_keys(item, Feature.model_fields, f"features[{i}]", suggest=suggest)
    return _Read(settings, raw_features, problems + more, warnings)


def _read_quickstart(data: list[Any], default_project: str) -> _Read:
    """The quickstart entries checked and translated to raw native feature objects."""
    entries, problems = _feature_list(data, "")
    warnings: list[str] = []
    known = QuickstartEntry.model_fields
    for i, entry in enumerate(entries):
        suggest = len(warnings) < MAX_WARNINGS
        warnings += unknown_keys(entry, known, f"[{i}]", suggest=suggest)
    raw_features, more = to_native(entries)
    return _Read({"project": default_project}, raw_features, problems + more, warnings)


def _feature_list(value: Any, where: str) -> tuple[list[Any], _Problems]:
    """The feature list itself: a list, not empty, not absurdly long."""
    if not isinstance(value, list):
        return [], [(-1, located(where, f"must be a list of features, got {describe(value)}"))]
    if not value:
        return [], [(-1, located(where, "the feature list is empty (add at least one feature)"))]
    if len(value) > MAX_FEATURES:
        message = f"{len(value)} features; the limit is {MAX_FEATURES} (split the spec)"
        return [], [(-1, located(where, message))]
    return value, []


def _usable_name(name: str) -> str:
    # A file name may hold anything (even undecodable bytes); the user did not write it
    # as the project name, so an odd one falls back quietly instead of failing the spec.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "project"
    return name if name.strip() and name.isprintable() else "project"


def _bounded(warnings: list[str]) -> list[str]:
    if len(warnings) <= MAX_WARNINGS:
        return warnings
    return [*warnings[:MAX_WARNINGS], f"... and {len(warnings) - MAX_WARNINGS} more warnings"]

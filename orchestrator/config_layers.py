"""Where a run's settings come from: flags, then ORCHESTRATE_* environment, then
orchestrate.toml, then defaults; merged, checked by `RunConfig`, every bad one named with its
layer. The CLI passes only the flags the user actually gave, so an unset flag never hides the
environment or the file.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ValidationError

from orchestrator.config import ConfigError, RunConfig, Settings

ENV_PREFIX = "ORCHESTRATE_"
# Nested tables come only from the file; everything else may come from the environment too.
FILE_ONLY = {"pricing", "security", "sandbox_options"}


def _from_environment(environ: Mapping[str, str]) -> Settings:
    values: Settings = {}
    for name in RunConfig.model_fields:
        if name in FILE_ONLY:
            continue
        raw = environ.get(ENV_PREFIX + name.upper())
        if raw is not None and raw != "":
            values[name] = raw
    return values


def _from_file(path: Path) -> Settings:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from err
    # Accept kebab-case keys as the flags spell them.
    values: Settings = {key.replace("-", "_"): value for key, value in data.items()}
    table = values.get("sandbox")
    if isinstance(table, dict):  # `[sandbox]`: its `mode` is the setting, the rest its options
        options = dict(table)
        values.pop("sandbox")
        if "mode" in options:
            values["sandbox"] = options.pop("mode")
        values["sandbox_options"] = options
    return values


def load_config(
    flags: Mapping[str, object], project_dir: Path, environ: Mapping[str, str] | None = None
) -> RunConfig:
    """Merge the layers; raise ConfigError listing every bad setting with where it came from."""
    merged, origin = _merged(flags, project_dir, environ)
    try:
        return RunConfig.model_validate(merged)
    except ValidationError as err:
        problems = []
        for error in err.errors():
            key = ".".join(str(part) for part in error["loc"]).replace("sandbox_options", "sandbox", 1)
            top = str(error["loc"][0]) if error["loc"] else ""
            where = origin.get(top, "configuration")
            hint = f" (set as {ENV_PREFIX}{top.upper()})" if where == "environment" else ""
            if where == "command line":  # name it as it was typed
                key = "--" + key.replace("_", "-")
            if error["type"] == "extra_forbidden":
                problems.append(f"{where}: unknown setting '{key}'{_did_you_mean(error['loc'])}")
            elif error["type"] == "finite_number":
                problems.append(f"{where}: {key}: {error['input']!r} is not a finite number; give one such as 5.0{hint}")
            else:
                message = error["msg"].removeprefix("Value error, ")
                # A rule across settings (thinking and the models) names its settings itself.
                problems.append(f"{where}: {key}: {message}{hint}" if key else f"{where}: {message}")
        raise ConfigError("bad configuration:\n  " + "\n  ".join(problems)) from None


def setting_origins(
    flags: Mapping[str, object], project_dir: Path, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Where each setting's value comes from: "default", "orchestrate.toml", "environment" or "command line"."""
    origin = _merged(flags, project_dir, environ)[1]
    return {name: origin.get(name, "default") for name in RunConfig.model_fields}


def _merged(
    flags: Mapping[str, object], project_dir: Path, environ: Mapping[str, str] | None
) -> tuple[Settings, dict[str, str]]:
    """The settings of every layer, later layers winning, and the layer each one came from."""
    environ = dict(os.environ if environ is None else environ)
    layers = [
        ("orchestrate.toml", _from_file(project_dir / "orchestrate.toml")),
        ("environment", _from_environment(environ)),
        ("command line", {k: v for k, v in flags.items() if v is not None}),
    ]
    merged: Settings = {}
    origin: dict[str, str] = {}
    for source, values in layers:
        for key, value in values.items():
            merged[key] = value
            origin[key] = source
    return merged, origin


def _did_you_mean(loc: tuple[int | str, ...]) -> str:
    """'; did you mean "max_cost"?' for a misspelt setting, as the spec check does for its keys."""
    model: type[BaseModel] = RunConfig
    for part in loc[:-1]:  # walk into nested tables such as [security]
        field = model.model_fields.get(str(part))
        nested = field.annotation if field is not None else None
        if not (isinstance(nested, type) and issubclass(nested, BaseModel)):
            return ""
        model = nested
    guess = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
    return f'; did you mean "{guess[0]}"?' if guess else ""

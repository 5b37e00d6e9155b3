"""The planned spec with its checks, and its JSON as `orchestrate plan` writes it.

Each feature gets the check command its check writer settled on, the check's files as
`protected` globs (the agent may not change them while building), and `red`: whether the
check was seen failing on the tree before the feature was built. The JSON leaves out what is
at its default, so the spec reads like one written by hand, and is validated once more by
`parse_spec` before it is written: never an invalid spec on disk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from orchestrator.json_types import JsonObject
from orchestrator.plan.check_writer import FeatureCheck
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.spec.load import parse_spec

# Left out of the written spec when at these values.
_QUIET_DEFAULTS: JsonObject = {"passes": False, "protected": [], "max_attempts": None, "priority": None, "red": None}


def with_checks(spec: FeatureSpec, checks: Sequence[FeatureCheck]) -> FeatureSpec:
    """`spec` with each checked feature's verify, protected files and red flag set."""
    by_id = {check.feature_id: check for check in checks}
    features = []
    for feature in spec.features:
        check = by_id.get(feature.id)
        if check is None or not check.files:
            features.append(feature)
            continue
        protected = list(dict.fromkeys([*feature.protected, *check.files]))
        red = None if check.verdict is None else check.red
        features.append(feature.model_copy(update={"verify": check.verify, "protected": protected, "red": red}))
    return spec.model_copy(update={"features": features})


def planned_spec_json(spec: FeatureSpec) -> str:
    """The spec as the native JSON `orchestrate plan` writes; raises `SpecError` if it were invalid."""
    data = spec.model_dump(mode="json", exclude_none=True)
    data["features"] = [
        {key: value for key, value in feature.items() if key not in _QUIET_DEFAULTS or value != _QUIET_DEFAULTS[key]}
        for feature in data["features"]
    ]
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    parse_spec(text.encode("utf-8"), source="the planned spec", default_project=spec.project)
    return text

"""Issue 13's costs of a long run, on their own, to compare two commits with the same code:

    python3 -m bench.scale            # 100,000-feature state and status, 5000 constraints (minutes)
    python3 -m bench.scale --quick    # 10,000 and 1000 and 500: seconds

For the figures before a change, run it in a checkout of the older commit with this file and
the modules it uses copied in (docs/benchmarks.md gives the commands). Prints one JSON object.
- fsyncs per feature over a 100-feature run (`short_plan`, summarizer every 5 features);
- the state snapshot of N features that failed with loud checks, and whether it loads;
- `orchestrate status` seconds on N features;
- active constraints after N were recorded, and what get_injection and record_report take then.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import constraints, state_size, status
from bench.harness import run_project
from bench.plans import short_plan, spec_document
from bench.summarizers import diligent_summarizer


def fsyncs_per_feature(features: int = 100) -> float:
    measure = run_project(spec_document(features), plan=short_plan, summarizer=diligent_summarizer)
    return round(measure.fsyncs / measure.features, 2)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bench.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    figures = {
        "fsyncs_per_feature": fsyncs_per_feature(),
        "failed_state": state_size.failed_snapshot(10_000 if quick else 100_000),
        "status": status.measure((1000,) if quick else (10_000, 100_000)),
        "constraints": constraints.measure(500 if quick else 5000),
    }
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

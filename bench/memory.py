"""Goal 6: does memory survive a careless summarizer?

The Context Agent is driven directly, as the run loop drives it (a report recorded per
feature, its log written, a summarization every 5 features), over a long run in which 50
project constraints and 100 decisions are planted. The summarizer (`CarelessSummarizer`)
rewords everything and drops a third of what it is given on every call. At the end:
- constraint retention: planted constraints still active, word for word;
- decision retention: of the 20 decisions the store may keep, how many are the 20 newest
  planted ones (eviction is by recency; relevance picks among them per feature later);
- shown: planted constraints that reach the last feature's `## Project Context`, where they
  compete for a share of the 2000-token budget, and how many tokens the summary keeps there
  (the careless summary as written, and a full-length one of the size the prompt asks for);
- with `siblings`, 50 more rules are planted, each deliberately similar to a planted one but
  different (a word changed, negated, "only", an exception): all must stay active;
- `error_rates()`: the near-duplicate test on labelled pairs, restatements it misses and
  different rules it would merge.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

from bench.plans import spec_features
from bench.summarizers import CarelessSummarizer
from context_agent.project_memory import ContextAgent
from shared_base.tokens import estimate_tokens
from context_agent.budget import MAX_STORED_DECISIONS, SUMMARY_BUDGET
from context_agent.words import find_near_duplicate
from orchestrator.run.attempt.context_view import feature_reader
from orchestrator.store.disk.atomic import write_json_atomic
from orchestrator.store.disk.paths import ProjectPaths

SUMMARIZE_EVERY = 5
VOCABULARY = """account address alert archive audit backup badge balance batch billing booking
bucket buffer bundle cache calendar campaign cart catalog channel checkout client cluster
comment cookie coupon cron csv dashboard digest discount domain draft email endpoint export
feed filter folder gateway header history hook import inbox invoice journal label ledger
locale mailer manifest metric migration monitor notice order outbox parser partner payment
pipeline policy portal preview price profile proxy queue quota receipt refund region release
request review route schedule schema search session sitemap snapshot source stock stream
subscription survey tenant theme ticket timezone token topic tracker upload vendor voucher
wallet webhook widget worker""".split()


def measure(
    features: int = 500, constraints: int = 50, decisions: int = 100, seed: int = 7, siblings: bool = False,
) -> dict[str, Any]:
    """Plant `constraints` and `decisions` evenly over `features` features and see what is left.
    With `siblings`, a similar but different rule is planted for each constraint as well."""
    rng = random.Random(seed)
    planted_constraints = [f"{_phrase(rng, 4)} must always go through {_phrase(rng, 3)}" for _ in range(constraints)]
    similar = [sibling(rule, kind, rng) for kind, rule in enumerate(planted_constraints)] if siblings else []
    planted_decisions = [f"Use {_phrase(rng, 5)} for {_phrase(rng, 3)}" for _ in range(decisions)]
    constraint_at = {number: [rule] for number, rule in _spread(planted_constraints, features).items()}
    for number, rule in _spread(similar, features).items() if similar else ():
        constraint_at.setdefault(min(number + 1, features), []).append(rule)
    decision_at = _spread(planted_decisions, features)
    specs = [SimpleNamespace(**{**f, "depends_on": f.get("depends_on", [])}) for f in spec_features(features)]
    summarizer = CarelessSummarizer(seed)

    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-memory-") as tmp, no_fsync():
        root = Path(tmp)
        paths = ProjectPaths.for_project(root)
        agent = ContextAgent(root, features=specs, model_call=summarizer, on_event=lambda kind, data: None,
                             read_feature=feature_reader(paths))
        pending: list[str] = []
        for number, feature in enumerate(specs, start=1):
            report = {
                "summary": f"Built {feature.name}: {_phrase(rng, 10)}.",
                "decisions": [decision_at[number]] if number in decision_at else [],
                "constraints": constraint_at.get(number, []),
                "notes": "",
            }
            _write_log(paths, feature, report)
            agent.record_report(feature.id, report)
            pending.append(feature.id)
            if len(pending) == SUMMARIZE_EVERY or number == len(specs):
                agent.summarize(pending, f"every-{SUMMARIZE_EVERY}")
                pending = []
        injection = agent.get_injection(specs[-1].id)
        stored_decisions = [d["text"] for d in _read(paths.context.key_decisions)["decisions"]]
        active = [c["description"] for c in _read(paths.context.active_constraints)["constraints"]]
        full = _with_full_length_summary(agent, paths, specs[-1].id)

    newest = planted_decisions[-MAX_STORED_DECISIONS:]
    shown = {c.description for c in injection.constraints}
    unique = len(planted_constraints) + len(similar)
    return {
        "active_per_unique": len(active) / unique,
        "siblings_planted": len(similar),
        "siblings_kept": sum(text in active for text in similar),
        "summary_tokens_at_end": estimate_tokens(injection.summary),
        "constraints_omitted_at_end": injection.omitted_constraints,
        "full_summary_tokens_at_end": estimate_tokens(full.summary),
        "full_summary_constraints_shown": len(full.constraints),
        "features": features,
        "summarizer_calls": summarizer.calls,
        "constraints_planted": len(planted_constraints),
        "constraints_kept": sum(text in active for text in planted_constraints),
        "constraint_retention": sum(text in active for text in planted_constraints) / len(planted_constraints),
        "active_constraints": len(active),
        "constraints_shown_at_end": sum(text in shown for text in planted_constraints),
        "decisions_planted": len(planted_decisions),
        "decisions_stored": len(stored_decisions),
        "newest_decisions_kept": sum(text in stored_decisions for text in newest),
        "decision_retention": sum(text in stored_decisions for text in newest) / len(newest),
        "context_tokens_at_end": injection.token_count,
    }


def sibling(rule: str, kind: int, rng: random.Random) -> str:
    """A rule deliberately similar to `rule` ("<4 words> must always go through <3 words>") but
    different: one word of what it goes through changed, its subject changed, negated, limited
    by "only", or given an exception."""
    subject, target = rule.split(" must always go through ")
    other = rng.choice([word for word in VOCABULARY if word not in rule.split()])
    variants = [
        f"{subject} must always go through {target.rsplit(' ', 1)[0]} {other}",
        f"{other} {subject.split(' ', 1)[1]} must always go through {target}",
        f"{subject} must never go through {target}",
        f"Only {subject} may go through {target}",
        f"{subject} must always go through {target} unless {other} is down",
    ]
    return variants[kind % len(variants)]


def error_rates(pairs: int = 200, seed: int = 11) -> dict[str, Any]:
    """The near-duplicate test on labelled pairs: careless restatements (one to three rounds of
    rewording, as the benchmark's summarizer writes them) it fails to recognise, and similar but
    different rules (`sibling`) it would merge."""
    rng = random.Random(seed)
    rewording = CarelessSummarizer(seed)
    missed = merged = 0
    for index in range(pairs):
        rule = f"{_phrase(rng, 4)} must always go through {_phrase(rng, 3)}"
        restated = rule
        for _ in range(1 + index % 3):
            restated = rewording._paraphrase(restated)
        missed += find_near_duplicate(restated, [rule]) is None
        merged += find_near_duplicate(sibling(rule, index, rng), [rule]) is not None
    return {"pairs": pairs, "restatements_missed": missed, "distinct_merged": merged,
            "missed_rate": missed / pairs, "false_merge_rate": merged / pairs}


def _with_full_length_summary(agent: ContextAgent, paths: ProjectPaths, feature_id: str) -> Any:
    """The injection with the stored summary swapped for one of the full length the prompt asks
    for: what the summary keeps of the 2000 tokens next to the constraints."""
    stored = _read(paths.context.running_summary)
    line = "The service keeps every part under src/, one module a part, checked offline by pytest."
    stored["summary"] = "\n".join([line] * (SUMMARY_BUDGET // estimate_tokens(line) + 1))
    write_json_atomic(paths.context.running_summary, stored)
    return agent.get_injection(feature_id)


def _phrase(rng: random.Random, words: int) -> str:
    return " ".join(rng.sample(VOCABULARY, words))


def _spread(items: list[str], features: int) -> dict[int, str]:
    """Feature number -> the item planted in its report, evenly over the run."""
    step = features / len(items)
    return {int(index * step) + 1: item for index, item in enumerate(items)}


def _write_log(paths: ProjectPaths, feature: Any, report: dict[str, Any]) -> None:
    """The part of the feature log the summarizer reads (the runner writes it in full)."""
    log = {"id": feature.id, "name": feature.name, "category": feature.category, "status": "passed",
           "attempts": 1, "report": report}
    write_json_atomic(paths.feature_log(feature.id), log)


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@contextmanager
def no_fsync() -> Iterator[None]:
    """This benchmark is about what is kept, not durability; thousands of fsyncs would only slow it."""
    original = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = original

"""Long runs: the injection stays within budget however much is recorded, and a summarizer
that rewrites everything in its own words, reorders and drops items loses nothing stored.

Run with `-s` to see the figures (injection tokens at features 10/100/300, retention).
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from context_agent.budget import (
    INJECTION_BUDGET,
    MAX_ACTIVE_CONSTRAINTS,
    MAX_STORED_DECISIONS,
    MAX_STORED_FAILURES,
    SUMMARY_BUDGET,
)
from context_agent.injection.render import render_project_context
from context_agent.project_memory import ContextAgent
from orchestrator.store.disk.paths import ProjectPaths
from shared_base.tokens import estimate_tokens

VOCABULARY = """account address admin alert archive audit avatar backup badge balance batch billing
blob booking browser bucket buffer bundle cache calendar campaign cart catalog channel chart
checkout cleanup client cluster comment config consent contact cookie coupon cron csv dashboard
digest discount domain draft email endpoint event export feed filter folder form gateway graph
header health history hook import inbox index invoice job journal label ledger limit locale lock
login mailer manifest menu merge message metric migration mobile module monitor notice order
outbox package page parser partner payment pdf permission photo pipeline plan policy poll portal
preview price profile proxy queue quota rate receipt refund region release report request review
role route rule schedule schema search secret session setting share sitemap snapshot sort source
stock storage stream subscription survey sync tag task team template tenant theme thread ticket
timezone token topic tracker upload user vendor version video voucher wallet webhook widget worker""".split()  # noqa: SIM905 (a paragraph of words reads better than a list)
SYNONYMS = {"use": "adopt", "uses": "adopts", "keep": "retain", "must": "should", "always": "consistently",
            "store": "persist", "stores": "persists", "never": "not ever", "with": "via", "every": "each"}


def _phrase(rng: random.Random, words: int) -> str:
    return " ".join(rng.sample(VOCABULARY, words))


def _paraphrase(text: str, rng: random.Random) -> str:
    """Reword like a model would: swap some words for synonyms, sometimes add a lead-in."""
    words = [SYNONYMS.get(word, word) if rng.random() < 0.7 else word for word in text.rstrip(".").split()]
    lead = rng.choice(["", "Note: ", "Remember that ", "Going forward, "])
    return lead + " ".join(words) + "."


def _message(text: str) -> SimpleNamespace:
    return SimpleNamespace(content=[SimpleNamespace(type="text", text=text)], stop_reason="end_turn",
                           usage=SimpleNamespace(input_tokens=1000, output_tokens=500))


def _prompt_section(prompt: str, heading: str) -> str:
    match = re.search(rf"## {re.escape(heading)}[^\n]*\n(.*?)(?:\n\n## |\Z)", prompt, re.DOTALL)
    return match.group(1) if match else ""


class RewritingSummarizer:
    """A fake summarizer that paraphrases, reorders and silently omits a third of everything:
    the summary's sentences and the stored decisions and constraints it echoes back."""

    def __init__(self, seed: int, fail_every: int = 0) -> None:
        self.rng = random.Random(seed)
        self.calls = 0
        self.fail_every = fail_every

    def __call__(self, **request: Any) -> SimpleNamespace:
        self.calls += 1
        if self.fail_every and self.calls % self.fail_every == 0:
            raise ConnectionError("HTTP 500 from the fake API")
        prompt = request["messages"][0]["content"]
        previous = _prompt_section(prompt, "Previous summary")
        sentences = [] if previous == "(none yet)" else [s for s in previous.splitlines() if s.strip()]
        logs = [json.loads(line) for line in _prompt_section(prompt, "Features since the last summary").splitlines()
                if line.startswith("{")]
        sentences = self._keep_two_thirds([_paraphrase(s, self.rng) for s in sentences])
        sentences += [f"Feature {log['id']} was completed with status {log['status']}." for log in logs]
        decisions = re.findall(r"^- \[D\d+\] \(Feature ([^)]+)\) (.*)$", _prompt_section(prompt, "Key decisions"), re.M)
        constraints = re.findall(r"^- \[C\d+\] (.*)$", _prompt_section(prompt, "Active constraints"), re.M)
        body = {
            "summary": "\n".join(sentences),
            "newDecisions": [{"text": _paraphrase(text, self.rng), "featureId": fid}
                             for fid, text in self._keep_two_thirds(decisions)],
            "retiredDecisionIds": [],
            "newConstraints": [{"description": _paraphrase(text, self.rng), "featureId": ""}
                               for text in self._keep_two_thirds(constraints)],
            "retiredConstraintIds": [], "newFailures": [], "preventions": [],
        }
        return _message(json.dumps(body))

    def _keep_two_thirds(self, items: list[Any]) -> list[Any]:
        kept = [item for item in items if self.rng.random() >= 1 / 3]
        self.rng.shuffle(kept)
        return kept


@pytest.fixture
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about budgets, not durability; thousands of fsyncs would only slow them."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def _features(count: int) -> list[SimpleNamespace]:
    rng = random.Random(7)
    categories = ["backend", "frontend", "billing", "auth", "infra", "data", "api", "ui", "ops", "docs"]
    features = []
    for number in range(1, count + 1):
        category = categories[number % len(categories)]
        depends = [f"f{number - len(categories)}"] if number > len(categories) else []
        features.append(SimpleNamespace(id=f"f{number}", name=f"{_phrase(rng, 2)} {number}".title(),
                                        category=category, description=_phrase(rng, 8), depends_on=depends))
    return features


def test_budget_holds_while_every_store_fills_to_its_maximum(tmp_path: Path, no_fsync: None) -> None:
    # 300 features, a new constraint every third: by the end the active constraints are at their
    # maximum (100), as are the decisions, failures and summary: what 1,000 features with one
    # every tenth showed, at under a third of the work (every store is bounded, so more features
    # only repeat the full-store case).
    features = _features(300)
    rng = random.Random(11)
    agent = ContextAgent(tmp_path, features=features, model_call=RewritingSummarizer(3, fail_every=4),
                         on_event=lambda kind, data: None)
    paths = ProjectPaths.for_project(tmp_path)
    constraints: list[str] = []
    pending: list[str] = []
    figures: dict[int, int] = {}
    worst = 0

    for number, feature in enumerate(features, start=1):
        injection = agent.get_injection(feature.id)
        rendered = render_project_context(injection)
        assert injection.token_count == estimate_tokens(rendered) <= INJECTION_BUDGET
        worst = max(worst, injection.token_count)
        if number in (10, 100, 300):
            figures[number] = injection.token_count

        if number % 3 == 1:
            constraints.append(f"{_phrase(rng, 5)} must always {_phrase(rng, 4)}")
        agent.record_report(feature.id, {
            "summary": f"Implemented {feature.name}: {_phrase(rng, 14)}.",
            "decisions": [f"Use {_phrase(rng, 6)} for {feature.name}", f"Keep {_phrase(rng, 7)} in one module"],
            "constraints": [constraints[-1], rng.choice(constraints)],
            "notes": _phrase(rng, 20),
        })
        if number % 3 == 0:
            output = "\n".join(f"E   AssertionError: {_phrase(rng, 10)}" for _ in range(50))
            agent.record_failure(feature.id, 1, {"command": "pytest -q", "success": False, "exitCode": 1,
                                                 "output": output, "error": None, "skipped": False, "attempt": 1})
            agent.record_prevention(feature.id, f"Check {_phrase(rng, 12)} first. Then rerun.")
        pending.append(feature.id)
        if number % 5 == 0:
            agent.summarize(pending, "every-5")
            pending = []
            stored = paths.context.running_summary.read_text(encoding="utf-8")
            assert estimate_tokens(stored) <= 2000
            assert estimate_tokens(json.loads(stored)["summary"]) <= SUMMARY_BUDGET

    decisions = json.loads(paths.context.key_decisions.read_text(encoding="utf-8"))["decisions"]
    failures = json.loads(paths.context.failure_memory.read_text(encoding="utf-8"))["failures"]
    active = json.loads(paths.context.active_constraints.read_text(encoding="utf-8"))["constraints"]
    assert len(decisions) == MAX_STORED_DECISIONS and len(failures) == MAX_STORED_FAILURES
    assert len(active) == len(set(constraints)) == MAX_ACTIVE_CONSTRAINTS
    print(f"\ninjection tokens at feature 10: {figures[10]}, 100: {figures[100]}, 300: {figures[300]}"
          f" (max {worst} of {INJECTION_BUDGET}); active constraints {len(active)}")


def test_two_hundred_rewriting_summarizations_lose_no_stored_item(tmp_path: Path, no_fsync: None) -> None:
    features = _features(1000)
    rng = random.Random(5)
    agent = ContextAgent(tmp_path, features=features, model_call=RewritingSummarizer(9),
                         on_event=lambda kind, data: None)
    planted = [f"Planted rule {n}: {_phrase(rng, 6)} must never {_phrase(rng, 3)}" for n in range(10)]
    plant_at = {number: rule for number, rule in zip(range(3, 1000, 97), planted, strict=False)}
    reported_constraints = set(planted)
    reported_decisions: list[str] = []

    for batch in range(200):
        ids = [feature.id for feature in features[batch * 5:(batch + 1) * 5]]
        for feature_id in ids:
            number = int(feature_id[1:])
            decision = f"Use {_phrase(rng, 6)} in {feature_id}"
            reported_decisions.append(decision)
            constraints = [plant_at[number]] if number in plant_at else []
            if number % 12 == 0:  # 83 of them and the 10 planted: under the limit of 100 active
                constraints.append(f"{_phrase(rng, 5)} must always {_phrase(rng, 4)}")
                reported_constraints.add(constraints[-1])
            agent.record_report(feature_id, {"summary": f"Did {_phrase(rng, 8)}.", "decisions": [decision],
                                             "constraints": constraints})
        result = agent.summarize(ids, "every-5")
        assert result.success is True

    paths = ProjectPaths.for_project(tmp_path)
    stored_decisions = [d["text"] for d in json.loads(paths.context.key_decisions.read_text(encoding="utf-8"))["decisions"]]
    active = [c["description"] for c in json.loads(paths.context.active_constraints.read_text(encoding="utf-8"))["constraints"]]
    latest = reported_decisions[-MAX_STORED_DECISIONS:]
    planted_kept = sum(rule in active for rule in planted)
    latest_kept = sum(decision in stored_decisions for decision in latest)
    retention = 100 * (planted_kept + latest_kept) / (len(planted) + len(latest))
    print(f"\nretention after 200 rewriting summarizations: {retention:.0f}% "
          f"(planted constraints {planted_kept}/{len(planted)}, latest decisions {latest_kept}/{len(latest)}); "
          f"stored decisions {len(stored_decisions)}, active constraints {len(active)} "
          f"of {len(reported_constraints)} reported")
    assert planted_kept == len(planted)
    assert sorted(stored_decisions) == sorted(latest)  # all kept, none displaced by restatements
    assert sorted(active) == sorted(reported_constraints)  # no paraphrased duplicates piled up

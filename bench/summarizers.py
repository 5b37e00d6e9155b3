"""Fake summarizers: they read the Context Agent's real request and answer its schema
(`context_agent.summarizer.summarizer_call.SummarizerAnswer`, camelCase keys).

`diligent_summarizer` does what the prompt asks: it keeps the summary near the target length,
folding older features into one line, and restates nothing that is stored. It answers through
the fake API. `CarelessSummarizer`, for the memory-quality benchmark, rewords everything and
drops a third of it; it is called in place of the SDK.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from shared_base.tokens import estimate_tokens

# What a model asked for "about 800 words" writes, in the product's own token estimate: prose
# runs about 1.5 tokens a word. Under the summary's 1500-token share, as the prompt intends.
SUMMARY_TOKENS = 1200

_SECTION = re.compile(r"^## (.+)$", re.MULTILINE)
_ITEM = re.compile(r"^- \[(?P<id>[A-Z]\d+)\] (?:\(Feature (?P<feature>[^,)]+)[^)]*\) )?(?P<text>.*)$")


@dataclass
class SummarizerPrompt:
    """The parts of a summarizer request the fakes look at."""

    summary: str
    decisions: list[dict[str, str]] = field(default_factory=list)  # id, feature, text
    constraints: list[dict[str, str]] = field(default_factory=list)  # id, text
    logs: list[dict[str, Any]] = field(default_factory=list)


def read_prompt(request: dict[str, Any]) -> SummarizerPrompt:
    content = request["messages"][-1]["content"]
    prompt = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    sections: dict[str, str] = {}
    marks = list(_SECTION.finditer(prompt))
    for mark, following in zip(marks, [*marks[1:], None]):
        end = following.start() if following else len(prompt)
        sections[mark.group(1)] = prompt[mark.end():end].strip("\n")
    summary = sections.get("Previous summary", "")
    parsed = SummarizerPrompt(summary="" if summary == "(none yet)" else summary)
    for line in sections.get("Key decisions", "").splitlines():
        if match := _ITEM.match(line):
            parsed.decisions.append({"id": match["id"], "feature": match["feature"] or "", "text": match["text"]})
    for line in sections.get("Active constraints", "").splitlines():
        if match := _ITEM.match(line):
            parsed.constraints.append({"id": match["id"], "text": match["text"]})
    logs_key = next((key for key in sections if key.startswith("Features since the last summary")), None)
    for line in sections.get(logs_key, "").splitlines() if logs_key else []:
        try:
            parsed.logs.append(json.loads(line))
        except ValueError:
            continue
    return parsed


def answer(summary: str, **changes: list[Any]) -> dict[str, Any]:
    """A complete answer: `summary` plus the given changes, every other list empty."""
    keys = ("newDecisions", "retiredDecisionIds", "newConstraints", "retiredConstraintIds", "newFailures", "preventions")
    return {"summary": summary, **{key: list(changes.get(key, [])) for key in keys}}


def diligent_summarizer(request: dict[str, Any]) -> dict[str, Any]:
    """A summary of about the target length: newest features in full, older ones folded."""
    prompt = read_prompt(request)
    previous = [line for line in prompt.summary.splitlines() if line.startswith("- ")]
    folded = next((line for line in prompt.summary.splitlines() if line.startswith("Earlier:")), "")
    earlier = int(folded.split()[1]) if folded else 0
    lines = previous + [
        f"- {log['id']} ({log.get('category')}, {log.get('status')}): {(log.get('report') or {}).get('summary', '')}"
        for log in prompt.logs
    ]
    header = "The service is built part by part under src/, one module per part, checked offline."
    while True:
        fold = [f"Earlier: {earlier} features done and summarized."] if earlier else []
        summary = "\n".join([header, *fold, *lines])
        if not lines or estimate_tokens(summary) <= SUMMARY_TOKENS:
            return answer(summary)
        lines.pop(0)
        earlier += 1


SYNONYMS = {
    "use": "adopt", "uses": "adopts", "keep": "retain", "keeps": "retains", "must": "should",
    "always": "consistently", "store": "persist", "stores": "persists", "never": "not ever",
    "with": "via", "every": "each", "through": "by way of", "before": "ahead of",
}
LEAD_INS = ("", "Note: ", "Remember that ", "Going forward, ")


class CarelessSummarizer:
    """A summarizer as bad as the memory benchmark assumes one can be: on every call it
    rewords everything in its own words, and silently leaves out a third of what it was
    given, the summary's lines and the stored decisions and constraints alike. It is called
    as the Context Agent calls the SDK (`model_call(**request)`), returning a message."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.calls = 0

    def __call__(self, **request: Any) -> Any:
        self.calls += 1
        prompt = read_prompt(request)
        lines = self._keep_two_thirds([self._paraphrase(line) for line in prompt.summary.splitlines() if line.strip()])
        lines += [f"Feature {log['id']} was completed with status {log.get('status')}." for log in prompt.logs]
        reported = [(log["id"], log.get("report") or {}) for log in prompt.logs]
        decisions = [(d["feature"], d["text"]) for d in prompt.decisions]
        decisions += [(fid, text) for fid, report in reported for text in report.get("decisions") or []]
        constraints = [c["text"] for c in prompt.constraints]
        constraints += [text for _, report in reported for text in report.get("constraints") or []]
        body = answer(
            "\n".join(lines),
            newDecisions=[{"text": self._paraphrase(text), "featureId": fid} for fid, text in self._keep_two_thirds(decisions)],
            newConstraints=[{"description": self._paraphrase(text), "featureId": ""} for text in self._keep_two_thirds(constraints)],
        )
        text_block = SimpleNamespace(type="text", text=json.dumps(body))
        usage = SimpleNamespace(input_tokens=estimate_tokens(json.dumps(request)), output_tokens=estimate_tokens(text_block.text),
                                cache_read_input_tokens=0, cache_creation_input_tokens=0)
        return SimpleNamespace(content=[text_block], stop_reason="end_turn", usage=usage)

    def _paraphrase(self, text: str) -> str:
        words = [SYNONYMS.get(word, word) if self.rng.random() < 0.7 else word for word in text.rstrip(".").split()]
        return self.rng.choice(LEAD_INS) + " ".join(words) + "."

    def _keep_two_thirds(self, items: list[Any]) -> list[Any]:
        kept = [item for item in items if self.rng.random() >= 1 / 3]
        self.rng.shuffle(kept)
        return kept

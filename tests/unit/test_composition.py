"""`--jobs N` by composition (issue 45 item 2), checked on the source itself.

A run's modes are collaborators given when a thing is built (a `Schedule` to the `Runner`, a
`PassLanding` to the `FeatureJob`, a stop token to the verifier and the client), never subclasses of
the run's parts: a newcomer reading `Runner` or `FeatureJob` reads all they do.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from orchestrator.llm.costs.reservations import StopToken
from orchestrator.run.checks.running.check_command import CheckVerifier
from tests.environments import unsandboxed

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "context_agent")
NOT_TO_SUBCLASS = {"Runner", "FeatureJob", "StateStore", "CheckVerifier"}


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _subclasses(path: Path, tree: ast.Module) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and NOT_TO_SUBCLASS & {_base_name(base) for base in node.bases}
    ]


def test_no_class_of_the_product_subclasses_the_runs_parts():
    found = [
        where
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for where in _subclasses(path, ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def test_the_scan_finds_a_subclass():
    tree = ast.parse("class Fast(runner.Runner): ...\nclass Job(FeatureJob): ...\nclass Fine(Protocol): ...")
    assert [where.split()[-1] for where in _subclasses(ROOT / "probe.py", tree)] == ["Fast", "Job"]


def test_a_verifier_given_a_stopped_token_starts_no_check(tmp_path: Path):
    token = StopToken()
    verifier = CheckVerifier(unsandboxed(tmp_path), timeout=30, stop=token)
    token.stop()
    with pytest.raises(KeyboardInterrupt):
        verifier.check("touch ran", 1)
    assert not (tmp_path / "ran").exists()

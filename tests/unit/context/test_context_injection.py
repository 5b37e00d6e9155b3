"""What a feature's prompt gets as `## Project Context`: the exact format of the spec, the most
relevant items, and never more than the budget."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from context_agent.budget import INJECTION_BUDGET, SUMMARY_BUDGET
from context_agent.injection.context_injection import ContextInjection
from context_agent.injection.render import render_project_context
from context_agent.memory.stores import RunningSummary
from context_agent.project_memory import ContextAgent
from orchestrator.store.disk.atomic import write_json_atomic
from orchestrator.store.disk.paths import ProjectPaths
from shared_base.tokens import estimate_tokens


def _feature(id: str, category: str = "backend", description: str = "", depends_on: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(id=id, name=id.replace("-", " ").title(), category=category,
                           description=description, depends_on=list(depends_on))


def test_render_matches_the_spec_format_exactly() -> None:
    injection = ContextInjection.model_validate({
        "featureId": "todo-api",
        "summary": "A todo API.\nModel and storage are done.",
        "decisions": [{"id": "d1", "text": "Ids are UUID4 strings", "featureId": "todo-model"}],
        "failures": [{"id": "f1", "description": "`pytest -q` failed: KeyError: 'id'", "prevention": "validate ids first",
                      "featureId": "todo-model"}],
        "constraints": [{"id": "c1", "description": "Standard library only", "featureId": "a"},
                        {"id": "c2", "description": "Python 3.11", "featureId": "a"}],
        "tokenCount": 60,
    })

    assert render_project_context(injection) == (
        "## Project Context\n"
        "\n"
        "**Summary:**\n"
        "A todo API.\n"
        "Model and storage are done.\n"
        "\n"
        "**Key Decisions:**\n"
        "- Ids are UUID4 strings (Feature todo-model)\n"
        "\n"
        "**Recent Failures to Avoid:**\n"
        "- `pytest -q` failed: KeyError: 'id': validate ids first\n"
        "\n"
        "**Active Constraints:**\n"
        "- Standard library only\n"
        "- Python 3.11"
    )


def test_empty_sections_are_left_out_and_nothing_at_all_renders_nothing() -> None:
    only_constraints = ContextInjection.model_validate({
        "featureId": "x", "summary": "", "decisions": [], "failures": [],
        "constraints": [{"id": "c1", "description": "Standard library only", "featureId": "a"}], "tokenCount": 9})

    assert render_project_context(only_constraints) == (
        "## Project Context\n\n**Active Constraints:**\n- Standard library only"
    )
    assert render_project_context(only_constraints.model_copy(update={"token_count": 0})) == ""


def test_a_fresh_project_injects_nothing(tmp_path: Path) -> None:
    injection = ContextAgent(tmp_path).get_injection("first")

    assert injection.token_count == 0
    assert render_project_context(injection) == ""


def test_token_count_is_the_estimate_of_the_rendered_section(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    agent.record_report("a", {"summary": "Built a.", "decisions": ["D1"], "constraints": ["C1"]})

    injection = agent.get_injection("b")

    assert injection.token_count == estimate_tokens(render_project_context(injection)) > 0


def test_decisions_from_dependencies_and_the_same_area_come_before_newer_unrelated_ones(tmp_path: Path) -> None:
    features = [
        _feature("todo-model", description="Todo dataclass"),
        _feature("todo-store", description="Persist todos in SQLite", depends_on=("todo-model",)),
        _feature("css-theme", category="frontend", description="Colours and fonts"),
        _feature("navbar", category="frontend", description="Top navigation bar"),
        _feature("todo-api", description="HTTP endpoints for todos", depends_on=("todo-store",)),
    ]
    agent = ContextAgent(tmp_path, features=features)
    agent.record_report("todo-model", {"decisions": ["Todo ids are UUID4 strings"]})
    agent.record_report("todo-store", {"decisions": ["One SQLite file per project"]})
    agent.record_report("css-theme", {"decisions": ["Dark theme by default"]})
    agent.record_report("navbar", {"decisions": ["Navbar collapses below 600px"]})

    decisions = agent.get_injection("todo-api").decisions

    # Direct dependency first, then the indirect one; the newer frontend decisions lose.
    assert [d.feature_id for d in decisions] == ["todo-store", "todo-model", "navbar"]


def test_on_a_retry_the_feature_s_earlier_failure_comes_first_and_its_latest_is_left_to_the_retry(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path, features=[_feature("a"), _feature("b"), _feature("c")])
    agent.record_failure("a", 1, {"command": "pytest -q", "exitCode": 1, "output": "E   KeyError: 'a'"})
    agent.record_failure("b", 1, {"command": "pytest -q", "exitCode": 1, "output": "E   KeyError: 'b'"})
    agent.record_failure("c", 1, {"command": "pytest -q", "exitCode": 1, "output": "E   KeyError: 'c'"})
    agent.record_failure("a", 2, {"command": "pytest -q", "exitCode": 1, "output": "E   IndexError: 'a'"})

    failures = agent.get_injection("a").failures

    # Its earlier failure, then the most recent other one; its latest is the retry's Last Verification Result.
    assert [(f.feature_id, "KeyError" in f.description) for f in failures] == [("a", True), ("c", True)]


def test_a_failure_since_resolved_is_shown_only_where_the_files_meet_not_by_dependency(tmp_path: Path) -> None:
    features = [_feature("lexer"), _feature("parser", depends_on=("lexer",)), _feature("cli"), _feature("docs")]
    agent = ContextAgent(tmp_path, features=features)
    agent.record_failure("lexer", 1, {"command": "pytest -q", "exitCode": 1, "output": "E   KeyError: 'x'"},
                         files=["src/lexer.py", "tests/test_lexer.py"])
    agent.record_failure("cli", 1, {"command": "pytest -q", "exitCode": 1, "output": "E   IndexError: 'y'"},
                         files=["src/cli.py"])
    agent.record_prevention("lexer", "Key the table by token kind")  # lexer passed since; cli has not

    def shown(feature_id: str, files: list[str]) -> set[str]:
        return {f.feature_id for f in agent.get_injection(feature_id, files=files).failures}

    assert shown("parser", ["src/parser.py"]) == {"cli"}  # builds on lexer, shares none of its files
    assert shown("docs", ["README.md", "src/lexer.py"]) == {"lexer", "cli"}  # no dependency, a shared file
    assert shown("docs", []) == {"cli"}  # an unresolved failure is shown to every feature


def test_all_active_constraints_are_listed_when_they_fit(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    rules = [f"Rule number {n}: keep module {n} pure" for n in range(30)]
    agent.record_report("a", {"constraints": rules})

    injection = agent.get_injection("b")

    # 30 short rules exceed the 250-token share but the unused summary budget takes them.
    assert [c.description for c in injection.constraints] == rules
    assert injection.omitted_constraints == 0


def test_when_constraints_outgrow_the_budget_the_relevant_ones_are_kept_and_the_rest_counted(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    features = [_feature("billing", category="payments", description="Invoices with stripe webhooks")]
    agent = ContextAgent(tmp_path, features=features)
    filler = [f"Generic rule {n} about formatting files and naming things consistently everywhere" for n in range(150)]
    agent.record_report("old", {"constraints": ["Stripe webhooks must verify the signature header"]})
    agent.record_report("other", {"constraints": filler})
    write_json_atomic(paths.context.running_summary, RunningSummary(summary="Project line.\n" * 400).model_dump(by_alias=True))

    injection = agent.get_injection("billing")
    text = render_project_context(injection)

    assert injection.token_count <= INJECTION_BUDGET
    assert "Stripe webhooks must verify the signature header" in text
    shown = len(injection.constraints)
    assert injection.omitted_constraints == 151 - shown > 0
    assert f"- ({151 - shown} more active constraints not shown: less relevant to this feature)" in text


def test_a_long_summary_is_cut_at_a_line_boundary_within_its_share(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    lines = [f"Line {n}: the {n}th fact about this project, stated in one sentence." for n in range(300)]
    write_json_atomic(paths.context.running_summary, RunningSummary(summary="\n".join(lines)).model_dump(by_alias=True))

    summary = ContextAgent(tmp_path).get_injection("x").summary

    assert 0 < estimate_tokens(summary) <= SUMMARY_BUDGET
    kept = summary.splitlines()
    assert kept == lines[: len(kept)]


def test_a_summary_of_one_huge_line_is_cut_between_sentences(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    sentences = [f"Sentence {n} says something." for n in range(800)]
    write_json_atomic(paths.context.running_summary, RunningSummary(summary=" ".join(sentences)).model_dump(by_alias=True))

    summary = ContextAgent(tmp_path).get_injection("x").summary

    assert estimate_tokens(summary) <= SUMMARY_BUDGET
    assert summary.endswith("says something.") and " ".join(sentences).startswith(summary)


def test_what_the_previous_feature_reported_is_in_the_next_feature_s_summary(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    agent.record_report("todo-model", {"summary": "Added Todo in todo/model.py with a done flag."})

    summary = agent.get_injection("todo-api").summary

    assert summary == "Recent features:\n- todo-model: Added Todo in todo/model.py with a done flag."


def test_injection_failure_gives_an_empty_injection_and_an_event(tmp_path: Path) -> None:
    events: list[str] = []
    agent = ContextAgent(tmp_path, on_event=lambda kind, data: events.append(kind))
    agent.record_report("a", {"decisions": ["D1"]})
    agent.features = None  # type: ignore[assignment]  # break it from inside

    injection = agent.get_injection("a")

    assert injection.token_count == 0 and render_project_context(injection) == ""
    assert events == ["context.injection_failed"]

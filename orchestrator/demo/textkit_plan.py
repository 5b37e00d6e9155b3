"""The demo model's script for `specs/textkit`: what the agent does at each turn of each feature.

Every attempt goes: write the feature's files, run its check, report, stop. Two attempts go
wrong on purpose, so that the demo shows the loop doing its job:
- `slugify`'s first attempt forgets accents and does not run its check; the check fails, the
  failure is fed back, and the retry fixes it;
- `truncate`'s first attempt adds a runtime dependency to `pyproject.toml`, which breaks
  `package-skeleton` (its check wants no dependencies). When the next prompt says
  "broke feature" (the regression guard's words), the retry leaves `pyproject.toml` alone. With
  no regression guard the attempt simply passes, and `cli` rewrites `pyproject.toml` anyway.
"""

from __future__ import annotations

from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import Block, bash, done_text, edit_create, report, text

from . import textkit_sources as src

CHECK_FILES = {
    "package-skeleton": "test_package.py", "slugify": "test_slugify.py", "word-wrap": "test_wrap.py",
    "case-conversion": "test_case.py", "text-stats": "test_stats.py", "truncate": "test_truncate.py",
    "cli": "test_cli.py", "docs": "test_docs.py",
}
_EXPORTS = {
    "slugify": "from textkit.slugify import slugify",
    "word-wrap": "from textkit.wrap import fill, wrap",
    "case-conversion": "from textkit.case import camel_case, kebab_case, snake_case, split_words",
    "text-stats": "from textkit.stats import text_stats",
    "truncate": "from textkit.truncate import truncate",
}
_MODULES = {
    "word-wrap": ("textkit/wrap.py", src.WRAP), "case-conversion": ("textkit/case.py", src.CASE),
    "text-stats": ("textkit/stats.py", src.STATS), "truncate": ("textkit/truncate.py", src.TRUNCATE),
}
_REPORTS: dict[str, tuple[str, list[str], list[str]]] = {
    "package-skeleton": ("Flat-layout textkit package with pyproject.toml (setuptools), version 0.1.0.",
                         ["flat layout: textkit/ at the project root, setuptools build backend"],
                         ["standard library only: pyproject.toml keeps `dependencies = []`"]),
    "slugify": ("slugify() in textkit/slugify.py: NFKD, ASCII only, lowercase runs joined by the separator.",
                ["slugify strips accents with unicodedata NFKD + ASCII encode"], []),
    "word-wrap": ("wrap() and fill() in textkit/wrap.py, greedy, words never broken.",
                  ["wrap is hand-written: textwrap breaks hyphenated words"], []),
    "case-conversion": ("split_words and snake/kebab/camel case in textkit/case.py.",
                        ["split_words uses one regex for acronym boundaries (HTTPServer)"], []),
    "text-stats": ("text_stats() in textkit/stats.py.", ["words are split() tokens stripped of punctuation"], []),
    "truncate": ("truncate() in textkit/truncate.py, with keyword-only whole_words.", [], []),
    "cli": ("argparse CLI in textkit/cli.py; python -m textkit and the textkit console script.",
            ["one subcommand per library function; TEXT defaults to stdin"],
            ["every public function gets a CLI subcommand"]),
    "docs": ("README.md with doctested examples; textkit.__all__ lists the nine functions.", [], []),
}
CHECK_ENV = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -B -m pytest -q --tb=short -p no:cacheprovider"


def textkit_plan(turn: AgentTurn) -> list[Block]:
    """The demo agent's reply at `turn` (a `fake_api` plan for every textkit feature)."""
    fid = turn.feature_id
    careless = fid == "slugify" and not turn.is_retry
    steps = [_write_step, _report_step] if careless else [_write_step, _check_step, _report_step]
    if fid not in CHECK_FILES or turn.step >= len(steps):
        return [done_text(fid)]
    return steps[turn.step](turn)


def _check_step(turn: AgentTurn) -> list[Block]:
    check = CHECK_FILES[turn.feature_id]
    return [text("Running the feature's check."), bash(f'{CHECK_ENV} "$ORCHESTRATE_SPEC_DIR/checks/{check}"')]


def _report_step(turn: AgentTurn) -> list[Block]:
    summary, decisions, constraints = _REPORTS[turn.feature_id]
    return [report(summary, decisions=decisions, constraints=constraints)]


def _export(fid: str) -> list[Block]:
    line = _EXPORTS[fid]
    return [bash(f"grep -qxF '{line}' textkit/__init__.py || echo '{line}' >> textkit/__init__.py")]


def _write_step(turn: AgentTurn) -> list[Block]:
    fid = turn.feature_id
    if fid == "package-skeleton":
        return [text("Creating the package and its pyproject.toml."),
                edit_create("textkit/__init__.py", src.SKELETON_INIT), edit_create("pyproject.toml", src.PYPROJECT)]
    if fid == "slugify":
        return _slugify(turn)
    if fid == "truncate":
        return _truncate(turn)
    if fid == "cli":
        return [text("Adding the argparse command line and the console script."),
                edit_create("textkit/cli.py", src.CLI), edit_create("textkit/__main__.py", src.MAIN),
                edit_create("pyproject.toml", src.PYPROJECT + src.SCRIPTS_TABLE)]
    if fid == "docs":
        return [text("Writing the README with doctested examples, and textkit.__all__."),
                edit_create("README.md", src.README), edit_create("textkit/__init__.py", src.FINAL_INIT)]
    path, content = _MODULES[fid]
    return [text(f"Writing {path}."), edit_create(path, content), *_export(fid)]


def _slugify(turn: AgentTurn) -> list[Block]:
    if turn.is_retry:
        return [text("The check failed on accents: normalizing with NFKD and dropping non-ASCII first."),
                edit_create("textkit/slugify.py", src.SLUGIFY), *_export("slugify")]
    return [text("slugify is simple: lowercase, then join the letter and digit runs."),
            edit_create("textkit/slugify.py", src.SLUGIFY_WITHOUT_ACCENTS), *_export("slugify")]


_ADD_DEPENDENCY = "sed -i 's/^dependencies = \\[\\]$/dependencies = [\"wcwidth>=0.2\"]/' pyproject.toml"
_DROP_DEPENDENCY = "sed -i 's/^dependencies = .*$/dependencies = []/' pyproject.toml"


def _truncate(turn: AgentTurn) -> list[Block]:
    path, content = _MODULES["truncate"]
    if "broke feature" in turn.request_text:
        return [text("My change broke package-skeleton: textkit must stay dependency-free. "
                     "Keeping the standard library only."),
                edit_create(path, content), bash(_DROP_DEPENDENCY), *_export("truncate")]
    return [text("Writing truncate; wcwidth would measure display width, adding it as a dependency."),
            edit_create(path, content), bash(_ADD_DEPENDENCY), *_export("truncate")]

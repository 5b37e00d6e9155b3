"""The HTML report's parts: the data read from a project, the page, its size at 10,000 features."""

from __future__ import annotations

import json
import re

import pytest

# ---- `orchestrate run SPEC --html PATH`, end to end against the fake API ------------------------


def _self_contained(page: str) -> bool:
    """No resource fetched from anywhere: no script or stylesheet source, no URL but the SVG namespace."""
    without_namespace = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    return not any(marker in without_namespace for marker in ("http://", "https://", "<script src", "<link ", "@import"))


def test_run_with_html_writes_the_report_of_the_run(fake_api, tmp_path):
    from tests.cli_helpers import run_cli, write_spec

    project, out = tmp_path / "project", tmp_path / "out" / "report.html"
    project.mkdir()
    (tmp_path / "out").mkdir()
    spec = write_spec(project, 3)

    result = run_cli(["run", str(spec), "--html", str(out)], project, fake_api)

    assert result.code == 0, result.stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html>")
    assert _self_contained(page) and "<svg" in page and "<style>" in page
    for index in (1, 2, 3):
        # The features by id and by the spec's name, each with its anchor and a link to its log.
        assert f'id="feature-feat-0{index}"' in page and f"Feature {index}" in page
        assert f'href="../project/.autonomous/logs/feat-0{index}.json"' in page


def test_run_with_html_writes_the_report_when_the_run_fails(fake_api, tmp_path):
    from tests.cli_helpers import run_cli, write_spec

    out = tmp_path / "report.html"
    spec = write_spec(tmp_path, 2, extra={"feat-02": {"verify": "echo 'E   AssertionError: no widget'; exit 1",
                                                       "max_attempts": 1}})

    result = run_cli(["run", str(spec), "--html", str(out)], tmp_path, fake_api)

    assert result.code == 1, result.stderr
    page = out.read_text()
    assert _self_contained(page)
    assert 'id="feature-feat-01"' in page and 'id="feature-feat-02"' in page
    assert "AssertionError: no widget" in page  # the failed check's error line, in the table


@pytest.mark.slow
def test_in_a_browser_the_report_names_its_bars_and_scales_and_lists_footprint_files(fake_api, tmp_path):
    """Issue 27: a screenshot or CI artifact reads without hovering: the charts name their bars
    and scales, the footprint column shows files, the feature column does not wrap."""
    from tests.browser import open_in_chromium
    from tests.cli_helpers import run_cli
    from tests.git_helpers import init_repo

    project = init_repo(tmp_path / "project")
    ids = ["a-rather-long-feature-id-for-wrapping", "feat-02"]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": [
        {"id": fid, "name": f"Feature {i}", "description": "d", "verify": f"test -f features/{fid}.txt"}
        for i, fid in enumerate(ids, 1)]}))
    out = tmp_path / "report.html"
    assert run_cli(["run", str(spec), "--html", str(out)], project, fake_api).code == 0

    footprint = "tr#feature-feat-02 td.files"
    names, ticks, feature = "svg.chart text.bar-name", "svg.chart text.tick", f"tr#feature-{ids[0]} td.feat a"
    page = open_in_chromium(out, tmp_path / "report.png", read=(footprint, names, ticks, feature))

    assert page.console_errors == []
    assert page.texts[footprint] == ["features/feat-02.txt"]
    assert page.texts[names].count("feat-02") == 3  # under its bar in tokens, cost and context
    assert any(text.startswith("a-rather-long") and text.endswith("…") for text in page.texts[names])
    assert "0 tokens" in page.texts[ticks] and any(re.fullmatch(r"[\d,]+ tokens", t) and t != "0 tokens"
                                                    for t in page.texts[ticks]), page.texts[ticks]
    assert any(re.fullmatch(r"\$\d\.\d{4}", t) and t != "$0.0000" for t in page.texts[ticks]), page.texts[ticks]
    (width, height), = page.boxes[feature]
    assert height < 24 and width > 200, page.boxes[feature]  # on one line, not wrapped

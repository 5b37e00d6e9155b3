"""Opening a page in headless Chromium for tests (Playwright driving the system browser).

Playwright's own browser download is never used: the system `chromium` (Debian's package,
which `.ci/run` installs) is passed as `executable_path`. Tests skip, saying why, only when
no browser or no Playwright can be found.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@dataclass
class OpenedPage:
    console_errors: list[str] = field(default_factory=list)
    charts: list[tuple[float, float]] = field(default_factory=list)
    # For each selector asked for: the rendered text of every element it matches, and its box (w, h).
    texts: dict[str, list[str]] = field(default_factory=dict)
    boxes: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def system_chromium() -> str | None:
    """The path of a Chromium or Chrome binary, or None."""
    configured = os.environ.get("ORCHESTRATE_TEST_CHROMIUM")
    if configured:
        return configured
    return next((found for name in _CANDIDATES if (found := shutil.which(name))), None)


def open_in_chromium(page_path: Path, screenshot: Path, read: Sequence[str] = ()) -> OpenedPage:
    """Load `page_path`, collect console errors, chart sizes and the text and box of what the
    selectors in `read` match, save a full-page screenshot."""
    browser_path = system_chromium()
    if browser_path is None:
        pytest.skip("no Chromium found (install Debian's `chromium` package, as .ci/run does)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install '.[test]')")
    opened = OpenedPage()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1040, "height": 900})
            page.on("console", lambda m: opened.console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: opened.console_errors.append(str(e)))
            page.goto(page_path.resolve().as_uri())
            page.wait_for_load_state("load")
            for chart in page.query_selector_all("svg.chart"):
                box = chart.bounding_box()
                opened.charts.append((box["width"], box["height"]) if box else (0.0, 0.0))
            for selector in read:
                found = page.query_selector_all(selector)
                opened.texts[selector] = [element.text_content() or "" for element in found]
                opened.boxes[selector] = [(box["width"], box["height"]) if (box := element.bounding_box()) else (0.0, 0.0)
                                          for element in found]
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return opened

"""The HTML report in a real headless browser (Debian's chromium, driven by Playwright): it loads offline with no
console error and no request, shows the failing kernel and its plot, sorts and filters, and no hostile name runs.

Skipped without chromium or Playwright, unless SCALECHECK_REQUIRE_TOOLS=1 (as in .ci/run), where it fails.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from scalecheck.api import check_plots
from scalecheck.report.html_report import render_check_html
from scalecheck.text import visible

from ..conftest import missing_tool
from .conftest import HOSTILE, Pair

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install '.[test]')"
    if CHROMIUM is None:
        return "chromium is not installed (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    missing = _missing()
    if missing:
        missing_tool(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


@pytest.fixture(scope="module")
def report(hostile_pair: Pair, tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = hostile_pair.result
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_check_html(r.verdict, r.context, plots=check_plots(r, 3)), encoding="utf-8")
    return path


def test_the_report_loads_offline_and_shows_the_failing_kernel(browser, report: Path) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    assert problems == []
    assert requests == [report.as_uri()]  # the page itself, nothing else
    verdict = page.locator("#verdict")
    assert "FAIL: 6 kernel(s) with a new scalability problem" in verdict.inner_text()
    sections = page.locator("section.kernel-detail")
    assert sections.count() == 6  # one per failing kernel
    first = sections.first
    assert first.locator("h3").is_visible()
    plot = first.locator("figure.plot svg")
    assert plot.is_visible()
    box = plot.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    assert page.locator("section.kernel-detail h3 code", has_text="main->solve").count() == 1
    page.close()


def test_the_kernel_table_sorts_and_filters(browser, report: Path) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto(report.as_uri())
    rows = page.locator("#kernels tbody tr")
    assert rows.count() == 7
    page.locator("th[data-key=ratio] button").click()  # ascending: the unchanged kernel (ratio ~1) first
    assert rows.first.locator("td[data-key=kernel]").inner_text() == "main->io"
    page.locator("th[data-key=ratio] button").click()  # descending
    assert rows.last.locator("td[data-key=kernel]").inner_text() == "main->io"
    page.fill("#filter-text", "solve")
    assert page.locator("#kernels tbody tr:not([hidden])").count() == 1
    assert page.locator("#filter-count").inner_text() == "1 of 7 shown"
    page.fill("#filter-text", "")
    page.select_option("#filter-severity", "none")
    assert page.locator("#kernels tbody tr:not([hidden])").count() == 1
    page.close()


def test_hostile_names_show_as_text(browser, report: Path) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto(report.as_uri())
    shown = page.locator("#kernels tbody td[data-key=kernel]").all_inner_texts()
    for name in HOSTILE:
        assert visible(name) in shown  # a line break shows as \n, as in the text and the annotations
    assert page.locator("img").count() == 0
    assert page.evaluate("document.scripts.length") == 1
    page.close()

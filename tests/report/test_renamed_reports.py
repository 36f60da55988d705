"""A renamed kernel with a regression in every report: both names shown, each rendering keeping hostile names inert."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from markupsafe import escape

from scalecheck.api import CheckResult, check, check_plots
from scalecheck.config import Config
from scalecheck.github.workflow import annotations
from scalecheck.report.check_report import render_check_json, render_check_text
from scalecheck.report.html_report import render_check_html
from scalecheck.report.markdown import render_check_markdown
from scalecheck.report.templating import md_code
from scalecheck.text import visible

from .conftest import Function, write

OLD = "<script>alert(1)</script>\n::error title=t::sort_small"
NEW = "<script>alert(1)</script>\n::error title=t::sort_tiny"
BASE: dict[str, Function] = {OLD: lambda p: 0.2 + 0.02 * p * np.log2(p), "main->io": lambda p: 1.0 + 0.4 * np.log2(p)}
CAND: dict[str, Function] = {NEW: lambda p: 0.2 + 0.01 * p**2, "main->io": BASE["main->io"]}


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    folder = tmp_path_factory.mktemp("renamed")
    baseline = write(folder / "baseline.json", BASE, 1)
    candidate = write(folder / "candidate.json", CAND, 2)
    return check([candidate], str(baseline), Config(root=folder).with_overrides(bootstrap=20), cwd=folder)


def test_the_rename_is_a_warning_naming_both_kernels(result: CheckResult) -> None:
    assert not result.verdict.failed
    [finding] = result.verdict.findings
    assert (finding.kind, finding.severity, finding.kernel) == ("renamed", "warning", NEW)
    assert finding.message.startswith(f"{OLD} was renamed {NEW}? it now grows as p^2, it grew as p * log2(p)")


def test_text_keeps_both_hostile_names_on_one_line(result: CheckResult) -> None:
    text = render_check_text(result.verdict, result.context)
    assert not any(line.startswith("::") for line in text.splitlines())
    shown_old, shown_new = OLD.replace("\n", "\\n"), NEW.replace("\n", "\\n")
    assert f"    {shown_old} was renamed {shown_new}? it now grows as p^2, it grew as p * log2(p)" in text


def test_json_carries_both_names(result: CheckResult) -> None:
    [finding] = json.loads(render_check_json(result.verdict, result.context))["findings"]
    assert finding["kind"] == "renamed" and finding["kernel"] == NEW
    assert finding["evidence"]["renamed from"] == OLD


def test_html_escapes_both_names_and_plots_the_old_baseline(result: CheckResult) -> None:
    page = render_check_html(result.verdict, result.context, plots=check_plots(result, 20))
    assert "<script>alert" not in page and OLD not in page and NEW not in page
    shown_old, shown_new = escape(visible(OLD)), escape(visible(NEW))
    assert f"<strong>renamed</strong>: {shown_old} was renamed {shown_new}? it now grows as p^2" in page
    assert f"<dt>renamed from?</dt><dd class=\"mono\">{shown_old}</dd>" in page
    figure = page.split('<figure class="plot">')[1].split("</figure>")[0]
    assert "baseline" in figure and "candidate" in figure  # the new name's curve against the old name's baseline


def test_markdown_escapes_both_names(result: CheckResult) -> None:
    text = render_check_markdown(result.verdict, result.context)
    assert "<script" not in text and "\n::" not in text
    assert md_code(NEW) in text  # the findings table
    assert md_code(OLD) in text  # the evidence: renamed from
    row = next(line for line in text.splitlines() if line.startswith("| :warning:"))
    assert len(re.split(r"(?<!\\)\|", row)) == 9 and "renamed" in row


def test_the_github_annotation_is_one_sanitised_line(result: CheckResult) -> None:
    [line] = annotations(result.verdict.findings)
    assert "\n" not in line and "\r" not in line
    assert line.startswith("::warning title=scalecheck renamed%3A <script>alert(1)</script>\\n%3A%3Aerror "
                           "title=t%3A%3Asort_tiny::")
    message = line.split("::", 2)[2]
    assert message.startswith("<script>alert(1)</script>\\n::error title=t::sort_tiny [time]: "
                              "<script>alert(1)</script>\\n::error title=t::sort_small was renamed ")


def test_the_cli_prints_the_annotation_sanitised(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from scalecheck.cli import OK, main

    baseline = write(tmp_path / "baseline.json", BASE, 1)
    candidate = write(tmp_path / "candidate.json", CAND, 2)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))
    code = main(["check", str(candidate), "--baseline", str(baseline), "--bootstrap", "20", "--github"])
    out = capsys.readouterr().out
    assert code == OK
    warnings = [line for line in out.splitlines() if line.startswith("::warning ")]
    assert len(warnings) == 1 and "\\n::error" in warnings[0] and "was renamed" in warnings[0]
    # the hostile names start no workflow command of their own, inside or outside the stopped block
    assert not any(line.startswith("::error") for line in out.splitlines())
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "<script" not in summary and md_code(OLD) in summary
